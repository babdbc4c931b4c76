"""Stop signals, for real: nothing autoclone started may outlive it, nothing is half-written.

Each test runs ``python -m autoclone`` on a script that starts a child, a grandchild that
escapes its process group with ``setsid``, and then spins; the script writes their pids
(and its parent's, the warm interpreter) where the test can read them. The test signals
autoclone and checks the exit code, the one line on stderr, that every one of those
processes is gone, and that the temporary directory is empty.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SPIN = textwrap.dedent(
    """\
    import os, subprocess, sys, time
    sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
    child = subprocess.Popen(sleep)
    escaped = subprocess.Popen(sleep, start_new_session=True)
    pids = [os.getpid(), child.pid, escaped.pid, os.getppid()]
    with open({pid_file!r} + ".tmp", "w") as out:
        out.write(" ".join(map(str, pids)))
    os.replace({pid_file!r} + ".tmp", {pid_file!r})
    while True:
        pass
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(path: Path, seconds: float = 120.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"the trial never started ({path})"
        time.sleep(0.05)
    return [int(pid) for pid in path.read_text().split()]


def _gone_within(pids: list[int], seconds: float) -> float | None:
    """Seconds until every pid is gone, or None if some outlived the limit."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if not any(_alive(pid) for pid in pids):
            return time.monotonic() - start
        time.sleep(0.02)
    return None


@pytest.fixture
def reaper() -> Iterator[list[int]]:
    """Pids the test learns; whatever the outcome, none is left running (a failing test
    on a shared machine must not leave a trial spinning at 100% CPU)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _start(tmp_path: Path, window: Path, *args: str) -> tuple[subprocess.Popen[str], Path, Path]:
    project, temp = tmp_path / "project", tmp_path / "temp"
    project.mkdir()
    temp.mkdir()
    pid_file = window / "pids"
    (project / "train.py").write_text(SPIN.format(pid_file=str(pid_file)))
    env = {**os.environ, "TMPDIR": str(temp), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoclone", "fix", "train.py", "--timeout", "300", *args],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    return proc, pid_file, temp


@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [
        (signal.SIGTERM, 143, "terminated"),
        (signal.SIGHUP, 129, "hangup"),
        (signal.SIGINT, 130, "interrupted"),
    ],
)
def test_a_stop_signal_ends_every_process_and_removes_the_copies(
    tmp_path: Path, window: Path, reaper: list[int], signum: int, code: int, word: str
) -> None:
    proc, pid_file, temp = _start(tmp_path, window)
    reaper.append(proc.pid)
    pids = _wait_for(pid_file)
    reaper += pids
    os.kill(proc.pid, signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert stderr.strip().splitlines()[-1] == f"autoclone: {word}; nothing written"
    assert "Traceback" not in stderr
    assert _gone_within(pids, 2.0) is not None, "a trial process outlived autoclone"
    assert list(temp.iterdir()) == [], "a temporary copy was left behind"


def test_after_kill_9_the_trial_and_its_escaped_grandchild_die_at_once(
    tmp_path: Path, window: Path, reaper: list[int]
) -> None:
    """No signal handler runs on SIGKILL: the warm interpreter sees its stdin close."""
    proc, pid_file, temp = _start(tmp_path, window)
    reaper.append(proc.pid)
    pids = _wait_for(pid_file)
    reaper += pids
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    seconds = _gone_within(pids, 10.0)
    assert seconds is not None, "a trial outlived kill -9 of autoclone by 10 s"
    deadline = time.monotonic() + 10
    while list(temp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(temp.iterdir()) == [], "the session's temporary directory was left behind"


def test_a_fresh_trial_dies_with_its_parent(
    tmp_path: Path, window: Path, reaper: list[int]
) -> None:
    """Without the warm interpreter the trial asks for a signal at its parent's death
    (PR_SET_PDEATHSIG), removes the session's folders and kills its own process group:
    the script's child dies too. (A grandchild that left the group with setsid is the
    documented exception.)"""
    (tmp_path / "train.py").write_text(SPIN.format(pid_file=str(window / "pids")))
    temp = tmp_path / "temp"
    temp.mkdir()
    harness = (
        "from pathlib import Path\nfrom autoclone.trial import Runner, RunSpec\n"
        f"Runner(root=Path({str(tmp_path)!r}), script='train.py', warm=False, timeout=300)"
        ".run(RunSpec({}))\n"
    )
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-c", harness], start_new_session=True, env=env)
    reaper.append(proc.pid)
    pids = _wait_for(window / "pids")
    reaper += pids
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert _gone_within(pids[:2], 5.0) is not None
    assert list(temp.iterdir()) == []


DEFERRED = textwrap.dedent(
    """\
    import os, signal, sys, time
    from autoclone import lifecycle
    lifecycle.install()
    steps = []
    try:
        with lifecycle.deferred("the commit finished"):
            with lifecycle.deferred("the inner step finished"):  # as write_files in fix
                os.kill(os.getpid(), signal.{name})
                time.sleep(0.2)  # a handler that ran now would raise here
            time.sleep(0.2)  # nor may the inner block's end act on it
            steps.append("commit")
    except lifecycle.Interrupted as exc:
        print(steps, exc.done, exc.exit_code)
        sys.exit(0)
    print("never interrupted")
    """
)


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130), ("SIGHUP", 129)])
def test_a_signal_during_a_commit_is_acted_on_after_it(name: str, code: int) -> None:
    """The write phase runs inside ``deferred``: the signal is real, and waits."""
    result = subprocess.run(
        [sys.executable, "-c", DEFERRED.format(name=name)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.stdout.strip() == f"['commit'] the commit finished {code}", result.stderr


PARALLEL = textwrap.dedent(
    """\
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    from autoclone import lifecycle
    from autoclone.trial import Runner, RunSpec
    lifecycle.install()
    runner = Runner(root=Path({root!r}), script="train.py", jobs=2, timeout=300)
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda _: runner.run(RunSpec({{}})), range(2)))
    except lifecycle.Interrupted as exc:
        print("stopped", exc.exit_code, flush=True)
    finally:
        runner.close()
    """
)


def test_parallel_trials_in_worker_threads_all_end_on_a_signal(
    tmp_path: Path, window: Path, reaper: list[int]
) -> None:
    """-j: trials run from worker threads, each in its own warm interpreter; the signal
    reaches the main thread only, and still every trial group and orphan dies."""
    spin = SPIN.replace("{pid_file!r}", "f'{pid_dir}/pids.{{os.getpid()}}'")
    (tmp_path / "train.py").write_text(spin.format(pid_dir=str(window)))
    proc = subprocess.Popen(
        [sys.executable, "-c", PARALLEL.format(root=str(tmp_path))],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    reaper.append(proc.pid)
    deadline = time.monotonic() + 120
    while len(list(window.glob("pids.*[0-9]"))) < 2:
        assert time.monotonic() < deadline, "the trials never started"
        time.sleep(0.05)
    pids = [int(p) for f in window.glob("pids.*[0-9]") for p in f.read_text().split()]
    reaper += pids
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert out.strip() == "stopped 143"
    assert time.monotonic() - started < 10
    assert _gone_within(pids, 2.0) is not None


def test_a_signal_after_the_result_is_printed_changes_nothing(tmp_path: Path) -> None:
    """The interpreter takes a while to tear torch down after the last line: a Ctrl-C
    then must not turn a finished repair into a death by signal (exit -2)."""
    (tmp_path / "train.py").write_text(
        "import torch\nw = torch.ones(3, requires_grad=True)\ne = w.exp()\ne[0] = 0.0\n"
        "e.sum().backward()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoclone", "fix", "train.py", "--dry-run"], cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("autoclone: fixed"):
            os.kill(proc.pid, signal.SIGINT)
            break
    proc.communicate(timeout=60)
    assert proc.returncode == 0
