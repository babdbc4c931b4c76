"""The parent's side of the warm zygotes (``autoclone.zygote``): a handle on each, and the
idle ones a closed runner leaves for the next runner of this process.

Starting a zygote costs two to three CPU seconds (torch, and the ``torch._dynamo`` the
first optimizer step imports). A process that repairs several scripts (a folder, the
notebook magic, a test suite) paid that once per script. A zygote holds nothing of a
trial (each trial is a fork of it): it is what a fresh interpreter is once it has
imported those modules and the script's installed imports. So a runner may fork its
trials from a zygote another runner started when that runner would have started the
same one: the same interpreter, the same environment apart from what each trial sets
itself (``AUTOCLONE_*``, the temp directory, ``PYTHONPATH``'s copies of the project), the
same ``PYTHONPATH`` outside the session, and the same modules imported ahead, which the
zygote itself checks with the new runner's search path (``zygote._fits``). A kept
zygote is stopped after ``IDLE`` seconds unused, and at exit; at most ``KEPT`` are kept.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from autoclone import lifecycle

#: Seconds an unused zygote is kept, and how many are kept at once
IDLE = 120.0
KEPT = 2
#: Set for each trial (and ``PYTEST_CURRENT_TEST``, which pytest sets for each test and
#: nothing a zygote imports reads): never part of what makes two zygotes alike
_PER_TRIAL = frozenset({"TMPDIR", "TEMP", "TMP", "PYTHONPATH", "PYTEST_CURRENT_TEST"})


def kind(env: dict[str, str], session: Path | None) -> tuple[Any, ...]:
    """What a zygote started with ``env`` for ``session`` depends on, besides the
    modules it imports ahead: two runners with the same kind would start the same one."""
    inside = str(session) + os.sep if session else None
    path = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    outside = tuple(e for e in path if not (inside and (e + os.sep).startswith(inside)))
    kept = tuple(
        sorted(
            (k, v) for k, v in env.items() if not k.startswith("AUTOCLONE_") and k not in _PER_TRIAL
        )
    )
    return (sys.executable, kept, outside)


class Zygote:
    """The parent's handle on ``autoclone.zygote``: one request, one forked trial."""

    def __init__(self, proc: subprocess.Popen[str], of: tuple[Any, ...] = ()) -> None:
        self.proc = proc
        self.kind = of
        self.since = 0.0  # when it was last kept unused (``keep``)

    @classmethod
    def start(cls, env: dict[str, str], session: Path | None) -> Zygote | None:
        """A new zygote for the runner of ``env``; None if it could not start."""
        env = {**env, "AUTOCLONE_SESSION": str(session or "")}
        proc = subprocess.Popen(
            [sys.executable, "-c", "from autoclone.zygote import serve; serve()"],
            cwd=session or tempfile.gettempdir(), env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True,
        )  # fmt: skip
        zygote = cls(proc, kind(env, session))
        if zygote._read(120.0) != {"ready": True}:
            zygote.stop()
            return None
        return zygote

    def _read(self, timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], max(timeout, 0.0))
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def _send(self, request: dict[str, Any]) -> bool:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):  # ValueError: stdin already closed
            return False
        return True

    def fits(self, env: dict[str, str], session: Path | None) -> bool:
        """Whether this zygote is what a new one for the runner of ``env`` would be; if
        so it now serves that runner (and removes its session should autoclone die)."""
        if self.proc.poll() is not None or self.kind != kind(env, session):
            return False
        asked = {**env, "AUTOCLONE_SESSION": str(session or "")}
        return self._send({"adopt": asked}) and self._read(30.0) == {"fits": True}

    def run(self, cwd: str, env: dict[str, str], trial: Path, timeout: float) -> bool | None:
        """Run one trial; True if it timed out, None if the zygote itself failed."""
        request = {"cwd": cwd, "env": env, "stdout": str(trial / "stdout"),
                   "stderr": str(trial / "stderr"), "dir": str(trial)}  # fmt: skip
        if not self._send(request):
            return None
        started = self._read(30.0)
        if not started or "pid" not in started:
            return None
        pid = int(started["pid"])
        lifecycle.track(pid)
        try:
            done = self._read(timeout)
        finally:
            lifecycle.kill_group(pid)  # on timeout, on a stop signal, and for what is left
            lifecycle.untrack(pid)
        if done is None:
            return None if self._read(30.0) is None else True
        return False

    def stop(self) -> None:
        """Ask the zygote to exit (it ends a running trial first); kill it if it will not."""
        self._send({"exit": True})
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            lifecycle.kill_group(self.proc.pid)
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_lock = threading.Lock()
_kept: list[Zygote] = []


def take(env: dict[str, str], session: Path | None) -> Zygote | None:
    """A kept zygote that fits the runner of ``env``, taken out of the pool; or None."""
    wanted = kind(env, session)
    with _lock:
        candidates = [z for z in _kept if z.kind == wanted]
        for zygote in candidates:
            _kept.remove(zygote)
    found = None
    for zygote in candidates:
        if found is None and zygote.fits(env, session):
            found = zygote
        else:
            keep(zygote)
    return found


def keep(zygote: Zygote) -> None:
    """Keep an idle zygote for the next runner; the oldest beyond ``KEPT`` is stopped."""
    if zygote.proc.poll() is not None:
        zygote.stop()
        return
    zygote.since = time.monotonic()
    with _lock:
        _kept.append(zygote)
        dropped = _kept[:-KEPT]
        del _kept[:-KEPT]
    for old in dropped:
        old.stop()
    timer = threading.Timer(IDLE, _expire)
    timer.daemon = True
    timer.start()


def _expire() -> None:
    """Stop the zygotes unused for ``IDLE`` seconds."""
    now = time.monotonic()
    with _lock:
        old = [z for z in _kept if now - z.since >= IDLE - 0.5]
        _kept[:] = [z for z in _kept if z not in old]
    for zygote in old:
        zygote.stop()


@atexit.register
def stop_all() -> None:
    """Stop every kept zygote (at exit, and for whoever wants none kept)."""
    with _lock:
        old, _kept[:] = list(_kept), []
    for zygote in old:
        zygote.stop()
