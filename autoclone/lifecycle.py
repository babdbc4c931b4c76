"""Signals, and every process autoclone starts: nothing left running, nothing half-written.

SIGINT, SIGTERM and SIGHUP (Ctrl-C, ``timeout``, CI cancellation, a closed terminal) all
end a run the same way: the handler SIGKILLs every trial process group that is running,
marks the session as stopping (so worker threads start nothing new) and raises
``Interrupted`` in the main thread, whose ``finally`` blocks then stop the warm
interpreters and remove the temporary copies. A commit that must not be cut in half runs
inside ``deferred()``: the signal waits until it is over.

Processes that outlive a ``kill -9`` of autoclone are ended from the other side: each
trial asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``), and the
warm interpreter ends its running trial as soon as its stdin (autoclone's end of the
pipe) reaches end of file.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType

#: The signals that stop a run, and how the one-line message names them.
STOP_SIGNALS = {
    getattr(signal, "SIGINT"): "interrupted",  # noqa: B009 - absent names on Windows
    getattr(signal, "SIGTERM"): "terminated",  # noqa: B009
}
if hasattr(signal, "SIGHUP"):
    STOP_SIGNALS[signal.SIGHUP] = "hangup"

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class Interrupted(BaseException):  # noqa: N818 - a signal, not an error
    """A stop signal reached autoclone. A ``BaseException`` so that no ``except
    Exception`` in a library (typer, click, ours) can swallow it on the way out."""

    def __init__(self, signum: int, done: str = "") -> None:
        super().__init__(signum)
        self.signum = signum
        self.done = done  # what had completed when the signal was taken ("" = nothing)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def word(self) -> str:
        return STOP_SIGNALS.get(self.signum, f"signal {self.signum}")


class _State:
    """Module state, guarded by one lock: tracked groups, the stop flag, deferrals."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # the handler may run while the main thread holds it
        self.groups: set[int] = set()
        self.stopped: int | None = None  # the signal that stopped the session
        self.deferring = 0
        self.pending: list[int] = []
        self.finished = False  # the result is out: a late signal has nothing left to stop


_state = _State()


def track(pgid: int) -> None:
    """A trial's process group is running: a stop signal must kill it."""
    with _state.lock:
        _state.groups.add(pgid)


def untrack(pgid: int) -> None:
    with _state.lock:
        _state.groups.discard(pgid)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def stopping() -> int | None:
    """The signal that stopped this session, if one did."""
    return _state.stopped


def check() -> None:
    """Raise ``Interrupted`` in any thread once the session is stopping: a worker thread
    must not start a trial, nor trust the outcome of one that was killed."""
    if _state.stopped is not None:
        raise Interrupted(_state.stopped)


def stop(signum: int) -> None:
    """Mark the session stopped and kill every tracked trial group at once."""
    with _state.lock:
        if _state.stopped is None:
            _state.stopped = signum
        groups = list(_state.groups)
    for pgid in groups:
        kill_group(pgid)


def _handle(signum: int, frame: FrameType | None) -> None:
    if _state.finished:
        return
    if _state.deferring:
        _state.pending.append(signum)
        return
    if _state.stopped is not None:
        return  # already stopping: a second Ctrl-C must not cut the clean-up short
    stop(signum)
    raise Interrupted(signum)


def install() -> Callable[[], None]:
    """Install the stop handlers (main thread only) for a new session; returns a function
    restoring the old ones."""
    with _state.lock:
        _state.stopped, _state.finished, _state.pending = None, False, []
    previous = {}
    for signum in STOP_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            previous[signum] = signal.signal(signum, _handle)

    def restore() -> None:
        for signum, handler in previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(signum, handler)

    return restore


def finish(*, until_exit: bool = False) -> None:
    """The outcome is decided: a signal from now on must not misreport it. With
    ``until_exit`` the stop signals stay blocked while the interpreter exits: it resets
    their handlers to the default early in a tear-down that takes a second with torch
    loaded, and a Ctrl-C then would kill a finished run (exit -2)."""
    _state.finished = True
    if until_exit:
        _block(True)


def _block(block: bool) -> None:
    """Block or unblock the stop signals in this thread. CPython runs the handlers of
    signals that arrived meanwhile before ``pthread_sigmask`` returns from unblocking."""
    if hasattr(signal, "pthread_sigmask"):
        how = signal.SIG_BLOCK if block else signal.SIG_UNBLOCK
        signal.pthread_sigmask(how, set(STOP_SIGNALS))


@contextlib.contextmanager
def deferred(done: str, *, then_finish: bool = False) -> Iterator[None]:
    """Run a commit without a stop signal cutting it in half.

    The signals are blocked in this thread (so even Python's default SIGINT handler
    waits) and, if another thread receives one, our handler only records it. On the
    way out of the outermost ``deferred`` a deferred signal is acted on (unless the run
    has ``finish``ed meanwhile); if the body had completed, the ``Interrupted`` it
    raises says so with ``done``. ``then_finish``: once the body completed and no
    signal came, the run is ``finish``ed (with no gap a signal could fall into).
    """
    with _state.lock:
        _state.deferring += 1
    _block(True)
    completed = False
    try:
        yield
        completed = True
    finally:
        with _state.lock:
            _state.deferring -= 1
            outermost = not _state.deferring
            pending, _state.pending = (_state.pending, []) if outermost else ([], _state.pending)
        try:
            if outermost:  # a nested commit leaves the signals to the one around it
                _block(False)
            if pending and not _state.finished:
                stop(pending[0])
                raise Interrupted(pending[0])
            if completed and then_finish:
                finish()
        except Interrupted as exc:
            exc.done = done if completed else ""
            raise


def _prctl(option: int, value: int) -> bool:
    """``prctl(2)`` through libc; False where there is no such call (not Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """In a trial: ask for ``signum`` when the process that started it dies. If it
    already died before the request took effect (we were re-parented), die now."""
    if _prctl(_PR_SET_PDEATHSIG, signum) and os.getppid() != parent:
        os._exit(1)


def group_dies_with_parent(parent: int, leftovers: Sequence[str] = ()) -> None:
    """In a trial that leads its own process group: when the parent dies, remove the
    ``leftovers`` folders it would have removed, and kill the whole group, so the
    processes the script started die with it. The parent-death signal is a real-time
    one the script has no reason to touch (SIGKILL, and no clean-up, where there is none)."""
    realtime = getattr(signal, "SIGRTMIN", None)
    if realtime is None:
        die_with_parent(parent)
        return

    def orphaned(signum: int, frame: FrameType | None) -> None:
        for folder in leftovers:
            shutil.rmtree(folder, ignore_errors=True)
        kill_group(os.getpgid(0))

    signal.signal(realtime + 3, orphaned)
    die_with_parent(parent, realtime + 3)


def kept_from_outside(parent: int, leftovers: Sequence[str] = ()) -> None:
    """Before a trial isolates itself: fork a keeper that stays in the real world, in the
    trial's process group, and when ``parent`` (autoclone) dies first removes the real
    ``leftovers`` folders (inside the trial they are bind mounts) and kills the group.
    The trial stays the process its parent started, leader of its group, as a trial
    forked from the warm interpreter is. The keeper watches both processes through
    pidfds and leaves as soon as the trial ends."""
    trial = os.getpid()
    if os.fork() != 0:
        return
    try:
        _keep(parent, trial, leftovers)
    finally:
        os._exit(0)


def _keep(parent: int, trial: int, leftovers: Sequence[str]) -> None:
    """The keeper's whole life: hold no file of the trial's open, wait, clean up."""
    try:
        ended = os.pidfd_open(trial)
    except ProcessLookupError:
        return
    try:
        orphaned = os.pidfd_open(parent)
    except ProcessLookupError:
        orphaned = -1
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in (ended, orphaned):
            with contextlib.suppress(OSError):
                os.close(int(name))
    ready = select.select([fd for fd in (ended, orphaned) if fd >= 0], [], [])[0]
    if ended in ready:
        return
    for folder in leftovers:
        shutil.rmtree(folder, ignore_errors=True)
    kill_group(os.getpgid(0))


def become_subreaper() -> bool:
    """In the warm interpreter: orphans of a trial (a grandchild that escaped its
    process group with ``setsid``) are re-parented here, where they can be ended."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)
