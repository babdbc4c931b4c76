"""Trials of a script written for ``torchrun``: every run launched by PyTorch's own launcher.

A DDP script reproduces its bug only as its users run it: N processes that rendezvous,
build a gloo process group and all-reduce gradients. With ``--launcher torchrun --nproc N``
each trial is ``torch.distributed.run --standalone`` (its rendezvous on a free port of
localhost, so trials running at once never collide; ``--max-restarts 0``: a failed worker
is the verdict, not something to retry) starting N workers. Each worker runs the ordinary
trial child (``autoclone.child``: backward counter, tracer, reference modes) and writes its
own result file and stderr; ``merge`` makes one result of them: what went wrong comes from
the rank that failed first-hand (a peer that only lost its connection to it, gloo's
"Connection closed by peer", is a consequence), the numbers of a passing run from rank 0
(after DDP's all-reduce every rank holds the same gradients).

Nothing a launch starts may outlive it. torchrun puts each worker in a session of its
own, so killing the launcher's process group does not reach them: each worker records
its group in the trial's ``ranks`` folder before it imports torch, the parent tracks
those groups with ``autoclone.lifecycle`` (a timeout or a stop signal kills them all) and
kills them when the launch ends, and each worker asks for SIGKILL when the launcher dies
(covering one that had not recorded itself yet). The launcher dies with autoclone, even
after a ``kill -9``, killing the recorded groups first.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from autoclone import isolation, lifecycle
from autoclone.classify import NOT_AUTOGRAD, classify

if TYPE_CHECKING:
    from autoclone.trial import RunResult

NONE = "none"
TORCHRUN = "torchrun"
LAUNCHERS = (NONE, TORCHRUN)

#: Seconds a launch may take before its first rank's script begins (the launcher and the
#: ranks import torch, the rendezvous opens); the trial's own timeout counts from there.
START_ALLOWANCE = 60.0

#: How often the parent looks for newly started ranks while the launch runs.
_POLL = 0.05

#: The launcher's pid, for its workers (their parent-death signal is tied to it).
_LAUNCHER_PID = "AUTOCLONE_LAUNCHER_PID"

#: Errors of a rank whose peer went away: consequences, never the culprit.
_PEER_GONE = re.compile(
    r"Connection closed by peer|Connection reset by peer|remote worker crashing|Broken pipe"
    r"|Connection refused|Socket Timeout|DistNetworkError|gloo/transport/tcp",
    re.IGNORECASE,
)

#: Lines torch.distributed writes to a rank's stderr that say nothing about the script:
#: glog-style warnings (``[W1123 08:32:58.63 ProcessGroupGloo.cpp:...]``, ``W1123 ...``),
#: gloo's connection lines, and the rank prefix of its exception hook.
_NOISE = re.compile(r"^(\[rank\d+\]:)?\[?[WIE]\d{4} \d\d:\d\d:\d\d|^\[Gloo\] ")
_RANK_PREFIX = re.compile(r"^\[rank\d+\]:")


def command(nproc: int) -> list[str]:
    """torchrun, started through ``agent`` (which ties it to autoclone's life), with
    ``nproc`` workers that each run ``worker``."""
    bootstrap = "from autoclone.launcher import {}; {}()"
    return [
        sys.executable, "-c", bootstrap.format("agent", "agent"),
        "--standalone", f"--nproc-per-node={nproc}", "--max-restarts=0",
        "--monitor-interval=0.1", "--no-python",
        sys.executable, "-c", bootstrap.format("worker", "worker"),
    ]  # fmt: skip


def rank_files(trial: Path, rank: int | str) -> tuple[Path, Path]:
    """Where one rank writes its result and its stderr."""
    return trial / f"result.{rank}.json", trial / f"stderr.{rank}"


def launch(nproc: int, cwd: Path, env: dict[str, str], trial: Path, timeout: float) -> bool:
    """Run one trial through torchrun; True if it timed out. Whatever the outcome, every
    rank's process group and the launcher's are dead when this returns."""
    ranks = trial / "ranks"
    ranks.mkdir()
    groups: set[int] = set()
    with open(trial / "stdout", "wb") as out, open(trial / "stderr", "wb") as err:
        proc = subprocess.Popen(
            command(nproc), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=err, start_new_session=True,
        )  # fmt: skip
        lifecycle.track(proc.pid)
        try:
            return _watch(proc, trial, nproc, groups, timeout)
        finally:  # also on a stop signal: no rank may outlive autoclone
            lifecycle.kill_group(proc.pid)
            proc.wait()
            _end_ranks(ranks, groups)
            lifecycle.untrack(proc.pid)


def _watch(
    proc: subprocess.Popen[bytes], trial: Path, nproc: int, groups: set[int], timeout: float
) -> bool:
    """Wait for the launcher, tracking each rank's group as it starts; True on timeout.
    The clock starts when the first rank's script does: the launcher's start, the ranks'
    own (an interpreter, torch imported) are not the script's time. Once every rank has
    written its result the verdict is in: the launch ends without waiting for the
    interpreters and the launcher to tear down (a second or two with torch loaded)."""
    ranks = trial / "ranks"
    deadline = time.monotonic() + START_ALLOWANCE + timeout
    began = False
    while True:
        try:
            proc.wait(timeout=_POLL)
            return False
        except subprocess.TimeoutExpired:
            pass
        new = _registered(ranks) - groups
        for pgid in new:
            lifecycle.track(pgid)
        groups |= new
        if not began and _began(ranks):
            began, deadline = True, time.monotonic() + timeout
        if all(rank_files(trial, rank)[0].exists() for rank in range(nproc)):
            return False
        if time.monotonic() >= deadline:
            return True


def _registered(ranks: Path) -> set[int]:
    """The process groups of the ranks that have started."""
    try:
        return {int(name) for name in os.listdir(ranks) if name.isdigit()}
    except OSError:
        return set()


def _began(ranks: Path) -> bool:
    """Whether a rank's script has begun (``autoclone.child`` marks it)."""
    try:
        return any(name.startswith("began.") for name in os.listdir(ranks))
    except OSError:
        return False


def _end_ranks(ranks: Path, groups: set[int]) -> None:
    """Kill every rank's group (what a rank started dies with it), stop tracking them."""
    for pgid in groups | _registered(ranks):
        lifecycle.kill_group(pgid)
        lifecycle.untrack(pgid)


def agent() -> None:
    """The launcher process: ``torch.distributed.run``'s own ``main`` with the arguments
    given, after arranging that it and its ranks die with autoclone."""
    parent = os.environ.get("AUTOCLONE_PARENT", "")
    if parent.isdigit():
        _die_with(int(parent))
    isolation.enter_behind_keeper()  # one world for the launch: its ranks share it
    os.environ[_LAUNCHER_PID] = str(os.getpid())
    from torch.distributed.run import main

    main(sys.argv[1:])


def _die_with(parent: int) -> None:
    """When autoclone dies: kill the recorded ranks' groups, remove the folders it would
    have removed, then this launcher's group. torchrun's monitor loop sleeps in Python,
    so the handler runs at once; the signal is a real-time one nobody else uses."""
    realtime = getattr(signal, "SIGRTMIN", None)
    if realtime is None:
        lifecycle.die_with_parent(parent)
        return
    result = os.environ.get("AUTOCLONE_RESULT", "")
    trial = os.path.dirname(result)
    leftovers = [os.environ.get("TMPDIR", ""), trial, os.environ.get("AUTOCLONE_SESSION", "")]

    def orphaned(signum: int, frame: FrameType | None) -> None:
        _end_ranks(Path(trial, "ranks"), set())
        for folder in filter(None, leftovers):
            shutil.rmtree(folder, ignore_errors=True)
        lifecycle.kill_group(os.getpgid(0))

    signal.signal(realtime + 4, orphaned)
    lifecycle.die_with_parent(parent, realtime + 4)


#: How long a rank pauses, the GIL released, before the script destroys its process group.
_DRAIN = 0.05


def guard_teardown() -> None:
    """Keep a rank from hanging or aborting as it tears gloo down (torch 2.13, CPU).

    Every all-reduce DDP starts inside a backward call keeps a Python object (the
    backward's ``contextvars`` context), so gloo's worker thread must take the GIL to free
    it once the all-reduce is done. If the process group's destructor runs first (it joins
    that thread, holding the GIL) the rank deadlocks; if the interpreter is finalizing,
    it aborts ("terminate called without an active exception"). A short pause before the
    script's ``destroy_process_group`` lets the worker threads finish; what the script
    computes is unchanged."""
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    original = c10d.destroy_process_group
    if getattr(original, "_autoclone_drains", False):
        return

    def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
        time.sleep(_DRAIN)
        return original(*args, **kwargs)

    destroy_process_group._autoclone_drains = True  # type: ignore[attr-defined]
    dist.destroy_process_group = c10d.destroy_process_group = destroy_process_group


def worker() -> None:
    """One rank: tied to the launcher's life, its group recorded, its own result and
    stderr files, then exactly what a single-process trial runs."""
    launcher = os.environ.get(_LAUNCHER_PID, "")
    if launcher.isdigit():
        lifecycle.die_with_parent(int(launcher))  # SIGKILL: it may be blocked inside gloo
    trial = Path(os.environ["AUTOCLONE_RESULT"]).parent
    (trial / "ranks" / str(os.getpgid(0))).touch()
    rank = os.environ.get("RANK", "0")
    result, stderr = rank_files(trial, rank)
    os.environ["AUTOCLONE_RESULT"] = str(result)
    os.environ["AUTOCLONE_BEGAN"] = str(trial / "ranks" / f"began.{rank}")
    fd = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    guard_teardown()
    from autoclone.child import main

    main()


def quiet(stderr: str) -> str:
    """A rank's stderr without torch.distributed's own lines, so that its last line is
    the script's (what a ``sys.exit`` is reported with, what a crash shows)."""
    lines = (_RANK_PREFIX.sub("", line) for line in stderr.splitlines())
    return "\n".join(line for line in lines if not _NOISE.match(line))


def peer_gone(result: RunResult) -> bool:
    """A rank that failed only because a peer went away (its connection closed)."""
    error = result.error
    return (
        result.status == "error"
        and error is not None
        and classify(error.line) == NOT_AUTOGRAD
        and _PEER_GONE.search(error.message) is not None
    )


def merge(ranks: Sequence[RunResult], launcher_stderr: str = "") -> RunResult:
    """One result for the whole launch, from each rank's (index = rank; a rank with no
    result file is a ``crash``): the first-hand failure if any rank had one, an autograd
    error first, then the lowest rank, with that rank's numbers, trace and stderr; else a
    crash; else rank 0's run (its peers' lost connections came after it stopped)."""
    first_hand = [r for r in ranks if r.status in ("error", "exit") and not peer_gone(r)]
    if first_hand:
        return min(first_hand, key=lambda r: r.error is None or not _autograd(r))
    finished = [r for r in ranks if r.status in ("stopped", "completed")]
    crashed = [r for r in ranks if r.status == "crash"]
    if crashed and not finished:
        said = "\n".join(r.stderr for r in crashed if r.stderr.strip())
        return replace(crashed[0], stderr=said or launcher_stderr)
    if finished:
        return ranks[0] if ranks[0].status in ("stopped", "completed") else finished[0]
    return ranks[0] if ranks else _nothing(launcher_stderr)


def _autograd(result: RunResult) -> bool:
    return result.error is not None and classify(result.error.line) != NOT_AUTOGRAD


def _nothing(stderr: str) -> RunResult:
    from autoclone.trial import RunResult

    return RunResult("crash", stderr=stderr)


def check(launcher: str, nproc: int) -> str | None:
    """What is wrong with ``--launcher``/``--nproc``, in one line; None when fine."""
    if launcher not in LAUNCHERS:
        return f"--launcher {launcher}: expected one of {', '.join(LAUNCHERS)}"
    if nproc < 1:
        return f"--nproc {nproc}: at least 1 process"
    if launcher == NONE and nproc != 1:
        return f"--nproc {nproc} needs --launcher torchrun (the script runs as one process)"
    return None
