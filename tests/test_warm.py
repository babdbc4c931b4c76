"""The warm runner (``tests/_warm.py``) prints, exits and fails as a fresh ``python`` does
(one with standard input from ``/dev/null``, which is what a warm run gets)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _warm import WarmPython

PROBE = textwrap.dedent(
    """\
    import atexit, os, sys
    print("argv", sys.argv)
    print("name", __name__, "file", __file__)
    print("cwd", os.getcwd())
    print("path", sys.path)
    print("fresh", "local" in sys.modules, "main" in sys.modules["__main__"].__dict__)
    import local
    print("local", local.VALUE, local.__file__)
    if not sys.argv[1:]:  # torch only here: the other fresh runs are quick without it
        import torch
        print("threads", os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads())
        torch.manual_seed(0)
        print("seeded", torch.rand(2).tolist())
    print("stdin", repr(sys.stdin.read()))
    atexit.register(print, "atexit", flush=False)
    sys.stderr.write("to stderr\\n")
    print("x" * 100_000, end="")  # no newline, not flushed by the script: the exit flushes it
    main = True
    if sys.argv[1:] == ["raise"]:
        def fails():
            raise ValueError("from the script")
        fails()
    if sys.argv[1:] == ["message"]:
        sys.exit("a message for stderr")
    if sys.argv[1:]:
        sys.exit(int(sys.argv[1]))
    print("the end")  # no exit: the script runs off its end
    """
)


def _fresh(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120, **kwargs,
    )  # type: ignore[call-overload]  # fmt: skip


def _same(warm: subprocess.CompletedProcess[str], fresh: subprocess.CompletedProcess[str]) -> None:
    assert warm.args == fresh.args
    assert (warm.returncode, warm.stdout, warm.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two folders with the same script and a local module of the same name that differs."""
    made = []
    for value in ("a", "b"):
        folder = tmp_path_factory.mktemp(f"folder_{value}")
        (folder / "input.py").write_text(PROBE)
        (folder / "local.py").write_text(f"VALUE = {value!r}\n")
        made.append(folder)
    return made[0], made[1]


@pytest.mark.parametrize(
    "args",
    [[], ["0"], ["3"], ["raise"], ["message"]],
    ids=["runs-off-its-end", "exit-0", "exit-3", "exception", "exit-message"],
)
def test_a_script_runs_as_in_a_fresh_python(
    warm_python: WarmPython, folders: tuple[Path, Path], args: list[str]
) -> None:
    a, b = folders if not args else (folders[0], None)  # each folder's own module: once
    fresh = {folder: _fresh(["input.py", *args], folder) for folder in (a, b) if folder}
    forks = warm_python.forks
    for folder in (a, b, a):  # a's module again after b's: nothing was cached
        if folder is None:
            continue
        run = warm_python.run(["input.py", *args], cwd=folder, timeout=120)
        _same(run, fresh[folder])
        value = (folder / "local.py").read_text().split("'")[1]
        assert f"\nlocal {value} {folder / 'local.py'}\n" in run.stdout
    assert warm_python.forks - forks == (2 if args else 3)  # forked, not run fresh


def test_code_runs_as_python_dash_c(warm_python: WarmPython, folders: tuple[Path, Path]) -> None:
    """``python -c code args``, as the CPU-mapped fixtures run: ``sys.path[0]`` is ``""``."""
    code = "import runpy, sys; del sys.argv[0]; runpy.run_path(sys.argv[0], run_name='__main__')"
    for args in (["input.py", "2"], ["input.py", "raise"]):
        _same(
            warm_python.run(["-c", code, *args], cwd=folders[1], timeout=120),
            _fresh(["-c", code, *args], folders[1]),
        )
    _same(  # an exception in the -c code itself
        warm_python.run(["-c", "import sys; print(sys.argv); 1/0", "x"], cwd=folders[1]),
        _fresh(["-c", "import sys; print(sys.argv); 1/0", "x"], folders[1]),
    )


def test_each_run_gets_the_random_seeds_a_fresh_process_gets(
    warm_python: WarmPython, tmp_path: Path
) -> None:
    """Where two fresh processes draw different numbers unseeded, two forks do too (the
    fixtures' patched-equals-expert check would pass for an unseeded script otherwise)."""
    code = (
        "import random, numpy, torch; "
        "print(torch.initial_seed(), torch.rand(1).item(), random.random(), numpy.random.rand())"
    )
    warm = [warm_python.run(["-c", code], cwd=tmp_path).stdout.split() for _ in range(2)]
    fresh = [_fresh(["-c", code], tmp_path).stdout.split() for _ in range(2)]
    assert len(warm[0]) == len(fresh[0]) == 4
    for generator in range(4):  # torch's seed, torch, random, numpy
        fresh_same = fresh[0][generator] == fresh[1][generator]
        assert (warm[0][generator] == warm[1][generator]) == fresh_same, generator


def test_syntax_errors_and_missing_scripts(warm_python: WarmPython, tmp_path: Path) -> None:
    (tmp_path / "input.py").write_text("print('never')\nx = (1,\n")
    _same(warm_python.run(["input.py"], cwd=tmp_path), _fresh(["input.py"], tmp_path))
    missing = warm_python.run(["absent.py"], cwd=tmp_path)
    assert missing.returncode == _fresh(["absent.py"], tmp_path).returncode == 2
    assert "can't open file" in missing.stderr


def test_the_environment_is_the_one_given(folders: tuple[Path, Path]) -> None:
    """Another environment gets a server of its own (torch reads ``OMP_NUM_THREADS`` on
    import); one where the import starts an OpenMP pool, which no fork keeps, runs fresh."""
    runner = WarmPython()
    try:
        for threads, forked in (("1", 1), ("2", 0)):
            env = {**os.environ, "OMP_NUM_THREADS": threads, "EXTRA": threads}
            code = "import os, torch; print(os.environ['EXTRA'], torch.get_num_threads())"
            before = runner.forks
            run = runner.run(["-c", code], cwd=folders[0], env=env, timeout=120)
            assert (run.returncode, run.stdout, run.stderr) == (0, f"{threads} {threads}\n", "")
            assert runner.forks - before == forked
    finally:
        runner.close()


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # killed, not reaped yet


def test_a_run_past_its_timeout_is_killed(warm_python: WarmPython, tmp_path: Path) -> None:
    (tmp_path / "input.py").write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        warm_python.run(["input.py"], cwd=tmp_path, timeout=3)
    assert time.monotonic() - started < 30
    pid = int(str(raised.value.stdout).strip())  # what it started dies with it
    for _ in range(100):
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid)
    (tmp_path / "input.py").write_text("print('after')\n")  # the server serves the next run
    assert warm_python.run(["input.py"], cwd=tmp_path, timeout=60).stdout == "after\n"
