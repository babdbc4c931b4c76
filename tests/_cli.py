"""``python -m autoclone ARGS`` run inside the test's own process: ``cli.main(argv)``.

A new interpreter per command costs half a second of imports, and its trials a new
zygote (two to three seconds of torch imports); run in-process, the command's runners
fork from the zygotes the earlier ones left (``autoclone.zygotes``). What only a real
process shows (the entry point, signals, closed descriptors, the exit of the interpreter)
is tested with real processes elsewhere (``test_signals``, ``test_hardening``, and the
explicit ``subprocess`` runs in ``test_cli``). The result is what ``subprocess.run(...,
capture_output=True, text=True)`` would give: the exit code, and both streams decoded as
UTF-8 with universal newlines.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

from autoclone.cli import main


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", newline="")


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    data = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def autoclone(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the command in ``cwd`` as the user would, in this process."""
    out, err = _stream(), _stream()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "autoclone", *args], code, _text(out), _text(err)
    )
