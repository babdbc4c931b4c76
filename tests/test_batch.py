"""Several scripts or a folder at once (``autoclone fix scripts/``, ``fix a.py b.py``):
which files a folder gives, the options each script's own ``fix`` receives, the exit code
of the batch, and real repairs of fixture scripts through ``python -m autoclone``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autoclone import batch
from autoclone.session import Options

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: Two real broken fixtures that are repaired in a few runs, and one that runs fine.
BROKEN = {"accumulated.py": "accumulated_loss", "total.py": "total_loss_augmented"}
FINE = ("fine.py", "seed002_no_error")


def autoclone(*args: str, cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoclone", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600, **kw,  # type: ignore[call-overload]
    )  # fmt: skip


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    """A folder with the two broken fixtures, the fine one and a module of helpers."""
    folder = tmp_path / "scripts"
    folder.mkdir()
    for name, case in [*BROKEN.items(), FINE]:
        shutil.copy(FIXTURES / case / "input.py", folder / name)
    (folder / "helpers.py").write_text("import torch\n\n\ndef double(x):\n    return 2 * x\n")
    return folder


# ------------------------------------------------------------------ which files


def test_a_folder_gives_its_scripts_and_skips_modules(tmp_path: Path) -> None:
    files = {
        "train.py": "import torch\nfor i in range(3):\n    pass\n",
        "guarded.py": "def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n",
        "calls.py": "import torch\nprint(torch.ones(1))\n",
        "broken.py": "def f(:\n",  # kept: its repair says what is wrong
        "helpers.py": '"""Helpers."""\nimport torch\nSIZE = 3\n\ndef f():\n    return 1\n',
        "config.py": "import os\nif os.environ.get('X'):\n    DEBUG = True\n",
        "setup.py": "from setuptools import setup\nsetup()\n",
        "_private.py": "print('x')\n",
        "notes.txt": "print('x')\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.py").write_text("print('x')\n")
    found = batch.find_scripts([tmp_path])
    assert [p.name for p in found] == ["broken.py", "calls.py", "guarded.py", "train.py"]
    named = batch.find_scripts([tmp_path / "helpers.py", tmp_path, tmp_path / "train.py"])
    assert [p.name for p in named][:2] == ["helpers.py", "broken.py"]  # named: always taken
    assert [p.name for p in named].count("train.py") == 1  # each file once


def test_a_folder_without_scripts_or_a_missing_path_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.py").write_text("def f():\n    return 1\n")
    (tmp_path / "a.py").write_text("print('a')\n")
    for args, needle in [(["lib"], "no scripts"), (["a.py", "nope.py"], "nope.py")]:
        result = autoclone("fix", *args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("autoclone: error: ") and needle in line


# ------------------------------------------------------------------ what each script gets


def test_each_script_gets_the_users_options_and_its_arguments() -> None:
    options = Options(
        script=Path("."), args=("--epochs", "3"), steps=5, timeout=30.0, device="cpu",
        overrides={"EPOCHS": "2"}, root=Path("proj"), budget=60.0, shrink=False,
        launcher="torchrun", nproc=2,
    )  # fmt: skip
    job = batch.Batch((Path("a.py"), Path("b.py")), options, batch.CHECK, at_once=2)
    argv = batch.child_argv(Path("a.py"), job, None)
    assert argv[1:7] == ["-m", "autoclone", "fix", "a.py", "--format", "json"]
    flags = " ".join(argv)
    for part in ["--steps 5", "--timeout 30.0", "--device cpu", "--set EPOCHS=2",
                 "--root proj", "--budget 60.0", "--no-shrink", "--launcher torchrun --nproc 2",
                 "--dry-run", "--jobs 1"]:  # fmt: skip
        assert part in flags, (part, flags)
    assert argv[-3:] == ["--", "--epochs", "3"]
    alone = batch.Batch((Path("a.py"),), Options(script=Path("."), jobs=3), batch.WRITE, 1)
    flags = " ".join(batch.child_argv(Path("a.py"), alone, None))
    assert "--jobs 3" in flags and "--dry-run" not in flags and "--launcher" not in flags


def test_nproc_needs_the_torchrun_launcher(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('a')\n")
    for command in ("fix", "explain"):
        result = autoclone(command, "a.py", "--nproc", "2", cwd=tmp_path)
        assert result.returncode == 2
        (line,) = result.stderr.strip().splitlines()
        assert "--nproc" in line and "--launcher torchrun" in line


# ------------------------------------------------------------------ how the batch ends


def _outcome(name: str, status: str | None, code: int) -> batch.Outcome:
    report = None if status is None else {"status": status, "edits": [{}], "runs": 3}
    return batch.Outcome(Path(name), code, 1.25, report, "autoclone: internal error")


def test_the_batch_exits_with_its_worst_script() -> None:
    fixed, unfixable = _outcome("a.py", "fixed", 0), _outcome("b.py", "unfixable", 1)
    bad, fine = _outcome("c.py", "bad_input", 2), _outcome("d.py", "no_error", 0)
    stopped = _outcome("e.py", None, 143)
    assert batch.worst([fixed, fine]) == 0
    assert batch.worst([fixed, unfixable, fine]) == 1
    assert batch.worst([unfixable, bad]) == 2
    assert batch.worst([bad, stopped]) == 143
    assert batch.worst([fixed, fine], check=True) == 1  # an autograd error was there
    assert batch.worst([fine, _outcome("f.py", "not_autograd", 1)], check=True) == 0
    assert batch.worst([fine, _outcome("g.py", "timeout", 1)], check=True) == 1  # unchecked
    assert stopped.as_json() == {
        "path": "e.py", "status": "error", "summary": "autoclone: internal error", "exit_code": 143
    }  # fmt: skip
    rows = batch.table([fixed, stopped]).splitlines()
    assert rows[0].split() == ["script", "status", "edits", "runs", "seconds"]
    assert rows[1].split() == ["a.py", "fixed", "1", "3", "1.2"]
    assert rows[2].split() == ["e.py", "error", "0", "0", "1.2"]


def test_a_folder_is_repaired_into_one_patch_that_git_applies(scripts: Path) -> None:
    """End to end, real torch: two broken fixtures and a fine script, in parallel."""
    before = {p.name: p.read_bytes() for p in scripts.iterdir()}
    started = time.monotonic()
    result = autoclone("fix", "scripts", "--dry-run", cwd=scripts.parent)
    seconds = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert {p.name: p.read_bytes() for p in scripts.iterdir()} == before
    headers = [line for line in result.stdout.splitlines() if line.startswith("diff --git")]
    assert headers == [f"diff --git a/scripts/{n} b/scripts/{n}" for n in sorted(BROKEN)]
    subprocess.run(["git", "apply", "--check", "-"], input=result.stdout, text=True,
                   cwd=scripts.parent, check=True)  # fmt: skip
    lines = result.stderr.splitlines()
    table = lines[lines.index(next(x for x in lines if x.startswith("script "))) :]
    assert [row.split()[:2] for row in table[1:4]] == [
        ["scripts/accumulated.py", "fixed"], ["scripts/fine.py", "no_error"],
        ["scripts/total.py", "fixed"],
    ]  # fmt: skip
    assert table[-1].startswith("autoclone: 3 scripts: 2 fixed, 1 no_error; nothing written")
    assert "autoclone: scripts/total.py: fixed: " in result.stderr  # each script's ending
    assert "helpers.py" not in result.stderr
    print(f"batch of 3 scripts: {seconds:.1f} s")


def test_check_writes_nothing_prints_json_lines_and_exits_1(scripts: Path) -> None:
    before = {p.name: p.read_bytes() for p in scripts.iterdir()}
    result = autoclone("fix", "scripts/total.py", "scripts/fine.py", "--check", "--format", "json",
                       cwd=scripts.parent)  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert {p.name: p.read_bytes() for p in scripts.iterdir()} == before
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["path"], r["status"], r["exit_code"]) for r in reports] == [
        ("scripts/total.py", "fixed", 1), ("scripts/fine.py", "no_error", 0),
    ]  # fmt: skip
    assert all(r["patch"] == "" for r in reports) and reports[0]["edits"]
    assert "running total.py with the autograd tracer" not in result.stderr  # JSON: no progress
    assert "check: 1 with an autograd error (1 fixable" in result.stderr.splitlines()[-1]


# ------------------------------------------------------------------ stop signals


def _marked(mark: str) -> list[int]:
    """Processes whose environment carries ``mark``: what the batch started, at any depth."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "environ").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_sigterm_stops_every_script_and_exits_143(tmp_path: Path) -> None:
    folder, temp = tmp_path / "scripts", tmp_path / "temp"
    folder.mkdir()
    temp.mkdir()
    for name in ("a.py", "b.py"):
        (folder / name).write_text("import time\nwhile True:\n    time.sleep(0.05)\n")
    mark = f"AUTOCLONE_TEST_{uuid.uuid4().hex}"
    env = {**os.environ, "TMPDIR": str(temp), mark: "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoclone", "fix", "scripts", "--timeout", "300"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # the first script's traced run has started
            if "with the autograd tracer" in line:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143
    assert rest.strip().splitlines()[-1] == "autoclone: terminated; nothing written"
    assert "Traceback" not in rest
    deadline = time.monotonic() + 2.0
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(mark) == [], "a process of the batch outlived it"
    assert list(temp.iterdir()) == []


def test_kill_9_of_a_dry_run_batch_leaves_no_folder_of_diffs(scripts: Path, tmp_path: Path) -> None:
    """repro batch_kill9_leaves_temp: the finished scripts' diffs are kept in anonymous
    memory files, which go with the batch even when it is killed with SIGKILL."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoclone", "fix", "scripts", "--dry-run", "--jobs", "1"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # one script's diff is in hand
            if ": fixed:" in line:
                break
        assert not list(temp.glob("autoclone-batch-*"))
        proc.kill()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    time.sleep(1.0)
    assert not list(temp.glob("autoclone-batch-*"))
