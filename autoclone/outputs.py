"""A trial's captured output stays small on disk and in autoclone's memory.

A script with a runaway print loop writes hundreds of MB a second; its trial's stdout and
stderr files would fill the temporary disk within one ``--timeout``. The files stay plain
files (the script, its DataLoader workers and torchrun's ranks all write to them
directly, at their own offsets), and while a trial runs a watcher thread punches a hole
(``fallocate(PUNCH_HOLE)``, as ``fallocate --punch-hole`` does) into everything between
the first ``HEAD`` and the last ``TAIL`` bytes of each: the blocks are freed, the size
stays. Reading keeps to the tail (``tail``), and says how much was dropped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

#: Bytes kept at the start and at the end of each output file.
HEAD = 1 << 20
TAIL = 1 << 20
#: Seconds between checks: at 300 MB/s a file holds at most this much more.
PERIOD = 0.2
_PUNCH_HOLE, _KEEP_SIZE = 0x02, 0x01
_BLOCK = 4096


def _fallocate() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.fallocate
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    return call  # type: ignore[no-any-return]


_FALLOCATE = _fallocate()


def trim(path: Path, done: dict[str, int]) -> None:
    """Free the middle of one file (what was punched already is in ``done``)."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    start = max(done.get(str(path), HEAD), HEAD)
    end = (size - TAIL) // _BLOCK * _BLOCK
    if _FALLOCATE is None or end - start < 16 * _BLOCK:
        return
    fd = os.open(path, os.O_WRONLY)
    try:
        if _FALLOCATE(fd, _PUNCH_HOLE | _KEEP_SIZE, start, end - start) == 0:
            done[str(path)] = end
    finally:
        os.close(fd)


@contextlib.contextmanager
def capped(folder: Path, pattern: str = "std*") -> Iterator[None]:
    """While the block runs, keep every output file in ``folder`` to its head and tail."""
    stop = threading.Event()
    done: dict[str, int] = {}

    def watch() -> None:
        while not stop.wait(PERIOD):
            for path in folder.glob(pattern):
                trim(path, done)

    watcher = threading.Thread(target=watch, name="autoclone-output-cap", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        for path in folder.glob(pattern):
            trim(path, done)


def tail(path: Path, chars: int = 20000) -> str:
    """The last ``chars`` characters of an output file, read from its end (never whole),
    with a first line saying how much before them was left out."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - 4 * chars)
            fh.seek(start)
            text = fh.read().decode("utf-8", errors="replace")[-chars:]
    except OSError:
        return ""
    if start == 0 and len(text) < chars:
        return text
    dropped = size - len(text.encode("utf-8", errors="replace"))
    return f"[autoclone: {dropped} earlier bytes of this output are not shown]\n{text}"
