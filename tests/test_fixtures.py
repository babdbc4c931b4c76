"""Every folder under fixtures/ is a real script repaired for real, then run again patched.

A fixture is ``input.py`` plus ``expected.json`` (status, error class, options), and for
fixed cases ``expected.patch`` (regenerate with ``pytest --regen-fixtures``) and
``expert.py``, the fix a person would write: the patched script must print exactly what
the expert's prints, and the patch may not change more lines than the expert's fix.
``check_set`` (NAME: VALUE) makes that comparison at smaller sizes, for scripts whose
full run takes minutes; the repair itself always sees the script as written. A
``wrong.py`` is the plausible trap (a patch that also removes the error): it must print
different numbers, so taking it would be caught. ``recorded.json`` (written with the patch)
is what the expert printed, under a key of every file and version that run read: a patched
run that prints it needs no new run of the expert or the trap (``tests/_recorded.py``).
``notes`` lists words the report's notes must contain (what a patch changes that the user
has to know), ``summary`` words an unfixable report's reason must contain; ``kinds`` the
fix kinds of a patch with several conflicts (``kind`` the one kind otherwise; default clone).
``launcher`` (``["torchrun", N]``) repairs with ``--launcher torchrun --nproc N`` and runs
the patched and expert scripts through ``torch.distributed.run`` with N ranks (a DDP
script prints on rank 0 only).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import _recorded
import pytest
from _warm import WarmPython

from autoclone.codemods.overrides import apply_overrides
from autoclone.repair import repair
from autoclone.session import Options

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_NOT_COPIED = {"expected.json", "expected.patch", "expert.py", "expert", "README.md", "wrong.py",
               _recorded.RECORD}  # fmt: skip


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        cases = sorted(p for p in FIXTURES.iterdir() if (p / "input.py").is_file())
        metafunc.parametrize("case", cases, ids=[p.name for p in cases])


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


#: ``"cpu_mapping": true``: a script written for a GPU runs here as its trials ran it, with
#: CUDA mapped to the CPU (``autoclone.devices``; nothing is mapped where a GPU is present).
_CPU_MAPPED = (
    "import runpy, sys, autoclone.devices as d; d.install(); del sys.argv[0]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


#: ``"launcher": ["torchrun", N]``: a DDP script runs through ``torch.distributed.run`` with N
#: ranks, each as its trials ran it: with gloo's teardown race kept away
#: (``autoclone.launcher.guard_teardown``), and without the interpreter's finalization.
_RANK = (
    "import os, runpy, sys, autoclone.launcher as l; l.guard_teardown(); del sys.argv[0]; "
    "runpy.run_path(sys.argv[0], run_name='__main__'); sys.stdout.flush(); os._exit(0)"
)


def _launched(launcher: list[Any] | None) -> list[str]:
    if not launcher:
        return []
    return ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={launcher[1]}",
            "--no-python", sys.executable, "-c", _RANK]  # fmt: skip


def _run(
    folder: Path,
    script: str,
    args: list[str],
    cpu_mapping: bool = False,
    launcher: list[Any] | None = None,
    warm: WarmPython | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python [runner] script args`` in ``folder``: forked from the warm interpreter
    (torch imported once per worker) unless the script runs through a launcher."""
    if warm is not None and not launcher:
        runner = ["-c", _CPU_MAPPED] if cpu_mapping else []
        return warm.run([*runner, script, *args], cwd=folder, timeout=120)
    runner = ["-c", _CPU_MAPPED] if cpu_mapping else _launched(launcher)
    return subprocess.run(
        [sys.executable, *runner, script, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _changed_lines(before: str, after: str) -> int:
    """Lines of the new file that are new or edited: a line with a clone added counts once."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))


def _workdir(case: Path, tmp_path: Path) -> Path:
    work = tmp_path / case.name
    shutil.copytree(case, work, ignore=lambda _d, names: [n for n in names if n in _NOT_COPIED])
    return work


def test_fixture(
    case: Path, tmp_path: Path, request: pytest.FixtureRequest, warm_python: WarmPython
) -> None:
    expected: dict[str, Any] = json.loads((case / "expected.json").read_text())
    work = _workdir(case, tmp_path)
    args = list(expected.get("args", []))
    before = _snapshot(work)
    launcher, nproc = expected.get("launcher", ["none", 1])
    report = repair(
        Options(
            script=work / "input.py",
            args=tuple(args),
            cwd=work,
            timeout=float(expected.get("timeout", 60)),
            launcher=launcher,
            nproc=nproc,
        )
    )
    assert report.status == expected["status"], report.summary
    assert _snapshot(work) == before, "a trial wrote into the user's folder"
    if expected["status"] != "fixed":
        assert report.patch == ""
        for words in expected.get("summary", []):  # why no patch, in the report's words
            assert words in report.summary, (words, report.summary)
        return
    assert report.error_class == expected["error_class"]
    assert report.candidates >= expected.get("min_candidates", 0)
    assert report.runs <= expected.get("max_runs", 99), f"{report.runs} runs"
    if expected.get("cpu_mapping"):  # a GPU script verified here: the report says so
        assert any(note.startswith("verified on the CPU") for note in report.notes)
    for words in expected.get("notes", []):  # what the report owes the user, in its words
        assert any(words in note for note in report.notes), (words, report.notes)
    kinds = expected.get("kinds", [expected.get("kind", "clone")])  # several conflicts, kinds
    assert {edit.kind for edit in report.edits} == set(kinds)
    for role, where in expected.get("diagnosis", {}).items():
        frame = where if isinstance(where, list) else ["input.py", where]
        assert report.diagnosis[role] == frame, f"{role} line"
    patch_file = case / "expected.patch"
    if request.config.getoption("--regen-fixtures"):
        patch_file.write_text(report.patch)
    assert report.patch == patch_file.read_text()
    regen = bool(request.config.getoption("--regen-fixtures"))
    check_set = expected.get("check_set", {})
    _check_patched_run(case, work, report.patch, args, check_set, warm_python, regen)


def _expert_copy(case: Path, work: Path) -> Path:
    """The original folder with the expert's files laid over it (``expert.py`` or ``expert/``)."""
    expert = work.parent / "expert"
    shutil.copytree(work, expert)
    if (case / "expert.py").is_file():
        shutil.copy(case / "expert.py", expert / "input.py")
    if (case / "expert").is_dir():
        shutil.copytree(case / "expert", expert, dirs_exist_ok=True)
    return expert


def _changed_in_folder(before: Path, after: Path) -> int:
    return sum(
        _changed_lines(file.read_text(), (after / file.relative_to(before)).read_text())
        for file in before.rglob("*.py")
    )


def _set_constants(folder: Path, constants: dict[str, str]) -> None:
    for file in folder.rglob("*.py"):
        file.write_text(apply_overrides(file.read_text(), constants))


def _check_patched_run(
    case: Path,
    work: Path,
    patch: str,
    args: list[str],
    check_set: dict[str, str],
    warm: WarmPython | None = None,
    regen: bool = False,
) -> None:
    """The patch applies with git, runs to its end, and prints what the expert's fix prints
    (recorded, ``tests/_recorded.py``, or run now where no record fits or it differs)."""
    expert = _expert_copy(case, work)
    original = work.parent / "original"
    shutil.copytree(work, original)
    subprocess.run(["git", "apply", "--check", "-"], input=patch, text=True, cwd=work, check=True)
    subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=work, check=True)
    assert _changed_in_folder(original, work) <= _changed_in_folder(original, expert)
    for folder in (work, expert):
        _set_constants(folder, check_set)
    expected = json.loads((case / "expected.json").read_text())
    cpu_mapping, launcher = expected.get("cpu_mapping", False), expected.get("launcher")
    patched = _run(work, "input.py", args, cpu_mapping, launcher, warm)
    assert patched.returncode == 0, patched.stderr[-2000:]
    if not regen and patched.stdout == _recorded.expert_stdout(case):
        return  # the expert printed this when it was recorded, and the trap did not
    by_expert = _run(expert, "input.py", args, cpu_mapping, launcher, warm)
    assert by_expert.returncode == 0, by_expert.stderr[-2000:]
    assert patched.stdout == by_expert.stdout
    if (case / "wrong.py").is_file():  # the trap a plausible patch falls into trains differently
        shutil.copy(case / "wrong.py", expert / "input.py")
        wrong = _run(expert, "input.py", args, cpu_mapping, launcher, warm)
        assert wrong.stdout != patched.stdout
    if regen:
        _recorded.write(case, by_expert.stdout)
