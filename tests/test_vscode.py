"""The shipped VS Code tasks (``editors/vscode/tasks.json``) on real ``autoclone`` output.

Each test runs a task as VS Code would: its command and arguments with ``${file}`` and the
other variables filled in, in the task's working directory, on a fixture copied into a
workspace under ``tmp_path``. Every output line that the task's problem-matcher regexp
(taken from the JSON) matches becomes a problem, its file resolved as the matcher's
``fileLocation`` says; the problems must be exactly the expected ones, in files that exist.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "editors" / "vscode" / "tasks.json"
FIXTURES = ROOT / "fixtures"
#: A write through ``.data`` into a tensor saved for backward: PyTorch raises nothing.
SILENT_WRITE = (
    "import torch\nw = torch.randn(4, requires_grad=True)\nfor step in range(3):\n"
    "    y = (w * w).sum()\n    w.data.mul_(0.99)\n    y.backward()\n"
)


@dataclass(frozen=True)
class Problem:
    file: str  # as printed
    line: int
    column: int
    severity: str
    message: str


def _task(label: str) -> dict[str, Any]:
    tasks = json.loads(TASKS.read_text())["tasks"]
    return next(t for t in tasks if t["label"] == label)


def python_regexp(js: str) -> re.Pattern[str]:
    """VS Code compiles the pattern as a JavaScript RegExp: named groups are spelled
    ``(?<name>...)`` there and a slash may be escaped; the rest means the same in Python."""
    return re.compile(js.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("\\/", "/"))


def _expand(value: str, variables: dict[str, str]) -> str:
    for name, replacement in variables.items():
        value = value.replace("${" + name + "}", replacement)
    assert "${" not in value, f"unknown variable in {value!r}"
    return value


def _variables(file: Path, workspace: Path) -> dict[str, str]:
    return {
        "file": str(file),
        "fileDirname": str(file.parent),
        "fileBasename": file.name,
        "workspaceFolder": str(workspace),
    }


def _run(label: str, file: Path, workspace: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The task's command in the task's cwd (the workspace folder when it names none)."""
    task, variables = _task(label), _variables(file, workspace)
    assert task["type"] == "shell"
    found = shutil.which(task["command"], path=str(Path(sys.executable).parent))
    command = [found or task["command"], *(_expand(a, variables) for a in task["args"])]
    cwd = Path(_expand(task.get("options", {}).get("cwd", "${workspaceFolder}"), variables))
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    return done, cwd


def _problems(output: str, file: Path, workspace: Path) -> list[Problem]:
    """What the problem matcher of the explain task reads from the terminal's text."""
    matcher = _task("autoclone: explain")["problemMatcher"]
    pattern = matcher["pattern"]
    regexp = python_regexp(pattern["regexp"])
    found = []
    for text in output.splitlines():
        m = regexp.search(text)
        if m:
            found.append(
                Problem(
                    m[pattern["file"]],
                    int(m[pattern["line"]]),
                    int(m[pattern["column"]]),
                    m[pattern["severity"]],
                    m[pattern["message"]],
                )
            )
    return found


def _resolve(path: str, file: Path, workspace: Path) -> Path:
    """The file VS Code opens for a matched path, per the matcher's ``fileLocation``."""
    location = _task("autoclone: explain")["problemMatcher"]["fileLocation"]
    kind, base = (location, "${workspaceFolder}") if isinstance(location, str) else location
    assert kind in ("autoDetect", "relative", "absolute"), kind
    if Path(path).is_absolute():
        return Path(path)
    return Path(_expand(base, _variables(file, workspace))) / path


def _workspace(tmp_path: Path, case: str) -> tuple[Path, Path]:
    """A workspace whose script sits two folders down, as scripts in a repository do."""
    workspace = tmp_path / "workspace"
    folder = workspace / "experiments" / case
    if case == "silent_write":
        folder.mkdir(parents=True)
        (folder / "input.py").write_text(SILENT_WRITE)
    else:
        shutil.copytree(FIXTURES / case, folder)
    return workspace, folder / "input.py"


CASES = {
    "exp_output_modified": [  # inplace_version: the saving line, then the writing line
        ("input.py", 23, "note", "tensor saved for backward here by Exp"),
        ("input.py", 24, "error", "modified in place here: RuntimeError: one of the variables"),
    ],
    "accumulated_loss": [  # backward_twice
        ("input.py", 11, "note", "graph built here and still used after the backward call"),
        ("input.py", 13, "error", "RuntimeError: Trying to backward through the graph a second"),
    ],
    "manual_sgd_leaf": [  # leaf_inplace: the write is the failing line
        ("input.py", 17, "error", "modified in place here: RuntimeError: a leaf Variable that"),
    ],
    "no_grad_view": [
        ("input.py", 31, "note", "multi-output view created here by __getitem__"),
        ("input.py", 32, "error", "modified in place here: RuntimeError: A view was created in"),
    ],
    "multi_file_block": [  # the lines are in a module the script imports
        ("models/block.py", 12, "note", "tensor saved for backward here by NativeLayerNorm"),
        ("models/block.py", 12, "error", "modified in place here: RuntimeError: one of the"),
    ],
    "silent_write": [  # no error at all: a warning only
        ("input.py", 5, "warning", "silent write into a tensor saved for backward"),
    ],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_explain_task_problems(case: str, tmp_path: Path) -> None:
    workspace, file = _workspace(tmp_path, case)
    done, cwd = _run("autoclone: explain", file, workspace)
    assert done.returncode == 0, done.stderr[-2000:]
    problems = _problems(done.stdout + done.stderr, file, workspace)
    got = [(p.file, p.line, p.column, p.severity) for p in problems]
    assert got == [(path, line, 1, severity) for path, line, severity, _ in CASES[case]]
    for problem, (_, _, _, message) in zip(problems, CASES[case], strict=True):
        assert problem.message.startswith(message), problem.message
        assert (cwd / problem.file).is_file(), f"{problem.file} not found from {cwd}"
        assert _resolve(problem.file, file, workspace) == file.parent / problem.file


def test_the_regexp_matches_only_editor_lines() -> None:
    """The explanation names lines too (``at input.py:42 `loss.backward()```): not problems."""
    regexp = python_regexp(_task("autoclone: explain")["problemMatcher"]["pattern"]["regexp"])
    assert regexp.search("What failed: ..., at input.py:42 `loss.backward()`.") is None
    assert regexp.search("autoclone: explained: RuntimeError: x  [1 run(s), 9.8 s]") is None
    windows = regexp.search(r"C:\work\input.py:7:1: note: tensor saved for backward here")
    assert windows is not None and windows[1] == r"C:\work\input.py" and windows[4] == "note"


def test_fix_dry_run_task_prints_the_patch_and_writes_nothing(tmp_path: Path) -> None:
    workspace, file = _workspace(tmp_path, "exp_output_modified")
    before = file.read_bytes()
    done, _ = _run("autoclone: fix --dry-run", file, workspace)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("diff --git a/input.py b/input.py")
    assert "+        uexp = uexp.clone()" in done.stdout
    assert file.read_bytes() == before
