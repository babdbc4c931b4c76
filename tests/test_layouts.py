"""Project layouts a script is run from (issue 19, item 2), through the real command line.

A package's module run as ``python -m pkg.train``; a ``PYTHONPATH`` relative to where the
user stands, into the project; the user's modules imported from outside the project root
(a src layout on ``PYTHONPATH``, ``sys.path.insert(0, '../lib')``). Each test repairs a
real script with real torch, applies the result and runs the script again as its user
does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

#: The model every layout imports: the in-place write is line 7, the save line 6.
MODEL = textwrap.dedent(
    """\
    import torch, torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__(); self.lin = nn.Linear(8, 1)
        def forward(self, x):
            y = torch.sigmoid(self.lin(x))
            y[y > 0.5] = 0
            return y
    """
)

#: The training loop, after its import of ``Net``; ``EPOCHS`` from the first argument.
LOOP = textwrap.dedent(
    """\
    import sys
    import torch, torch.nn as nn
    def main():
        epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
        torch.manual_seed(0)
        net = Net(); opt = torch.optim.SGD(net.parameters(), lr=0.1); bce = nn.BCELoss()
        x = torch.randn(32, 8); t = (torch.rand(32, 1) > 0.5).float()
        for epoch in range(epochs):
            opt.zero_grad()
            loss = bce(net(x), t)
            loss.backward()
            opt.step()
            print('loss {:.6f}'.format(loss.item()))
    if __name__ == '__main__':
        main()
    """
)

SYS_PATH = "import sys\nsys.path.insert(0, '../lib')\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _run(
    *args: str, cwd: Path, pythonpath: str | None = None, autoclone: bool = True
) -> subprocess.CompletedProcess[str]:
    """``autoclone ARGS`` (or ``python ARGS``) from ``cwd``, with the user's
    ``PYTHONPATH`` as given (none if None)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = "1"
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, *(["-m", "autoclone"] if autoclone else []), *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _trains(result: subprocess.CompletedProcess[str], epochs: int) -> None:
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("loss ") == epochs, result.stdout


# -- python -m pkg.train ------------------------------------------------------------------
def _package(tmp_path: Path) -> Path:
    return _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/model.py": MODEL,
        "pkg/train.py": "from .model import Net\n" + LOOP,
    })  # fmt: skip


def test_fix_m_runs_the_module_as_python_m_does_and_patches_the_package(tmp_path: Path) -> None:
    """``fix -m pkg.train -- 3``: every run is ``python -m pkg.train 3`` (its relative
    import works), the write in ``pkg/model.py`` is repaired there, and the patched
    package trains under ``python -m``."""
    root = _package(tmp_path)
    result = _run("fix", "-m", "pkg.train", "--format", "json", "--", "3", cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "fixed", report["summary"]
    assert report["diagnosis"]["mutation"] == ["pkg/model.py", 7]
    assert [e["file"] for e in report["edits"]] == ["pkg/model.py"]
    assert (root / "pkg/train.py").read_text() == "from .model import Net\n" + LOOP
    assert (root / "pkg/model.py").read_text() != MODEL
    _trains(_run("-m", "pkg.train", "3", cwd=root, autoclone=False), 3)


def test_explain_m_names_the_package_lines_and_a_bad_name_is_one_line(tmp_path: Path) -> None:
    root = _package(tmp_path)
    explained = _run("explain", "-m", "pkg.train", cwd=root)
    assert explained.returncode == 0, explained.stderr
    assert "Modified in place at pkg/model.py:7 `y[y > 0.5] = 0`" in explained.stdout
    assert "pkg/model.py:7:1: error: modified in place here" in explained.stdout
    for args, needle in (
        (["fix", "-m", "pkg.nope"], "-m pkg.nope: no module of that name"),
        (["explain", "-m", "pkg/train.py"], "-m pkg/train.py: not a module name"),
        (["fix", "-m", "pkg.train", "pkg/train.py"], "-m pkg.train runs one module"),
    ):
        bad = _run(*args, cwd=root)
        assert bad.returncode == 2, bad.stderr
        assert bad.stderr.count("\n") == 1 and needle in bad.stderr, bad.stderr


def test_a_package_module_run_as_a_file_ends_with_the_m_command(tmp_path: Path) -> None:
    """``fix pkg/train.py`` fails as ``python pkg/train.py`` does, at its relative import;
    the line says how to run it as its users do."""
    root = _package(tmp_path)
    result = _run("fix", "pkg/train.py", "--dry-run", "--", "3", cwd=root)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("autoclone: not_autograd: not an autograd error: ImportError: "
                           "attempted relative import with no known parent package")  # fmt: skip
    assert "`autoclone fix -m pkg.train -- 3`" in last, last


# -- PYTHONPATH ---------------------------------------------------------------------------
def test_a_relative_pythonpath_into_the_project_is_the_trials_copy(tmp_path: Path) -> None:
    """``PYTHONPATH=. autoclone fix scripts/train.py --root .`` from the repository's top:
    ``.`` is that folder (not wherever a trial's interpreter starts), and in a trial it is
    the trial's copy of it, so the edit tried in ``lib/model.py`` is the one imported."""
    root = _write(tmp_path, {
        "lib/__init__.py": "",
        "lib/model.py": MODEL,
        "scripts/train.py": "from lib.model import Net\n" + LOOP,
    })  # fmt: skip
    result = _run("fix", "scripts/train.py", "--root", ".", cwd=root, pythonpath=".")
    assert result.returncode == 0, result.stderr
    assert "Modified in place at lib/model.py:7" in result.stderr
    assert (root / "lib/model.py").read_text() != MODEL
    _trains(_run("scripts/train.py", cwd=root, pythonpath=".", autoclone=False), 5)


# -- the user's modules outside the project root -------------------------------------------
def _src_layout(tmp_path: Path) -> Path:
    return _write(tmp_path, {
        "src/mypkg/__init__.py": "",
        "src/mypkg/model.py": MODEL,
        "scripts/train.py": "from mypkg.model import Net\n" + LOOP,
    })  # fmt: skip


def test_a_write_outside_the_root_is_named_there_with_the_root_to_pass(tmp_path: Path) -> None:
    """A src layout on ``PYTHONPATH`` (as an editable install puts it on ``sys.path``),
    repaired with the script's folder as root: the explanation names the write in
    ``src/mypkg/model.py``, not the caller's line, and the outcome names ``--root .``;
    nothing is written."""
    root = _src_layout(tmp_path)
    src = str(root / "src")
    result = _run("fix", "scripts/train.py", cwd=root, pythonpath=src)
    assert result.returncode == 1, result.stderr
    assert "Modified in place at ../src/mypkg/model.py:7 `y[y > 0.5] = 0`" in result.stderr
    assert "Saved for backward at ../src/mypkg/model.py:6" in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "autoclone: unfixable: inplace_version: src/mypkg/model.py:7 is outside the project "
        "root scripts/"
    ), last
    assert "rerun with --root . to repair it there" in last
    assert (root / "src/mypkg/model.py").read_text() == MODEL


def test_with_a_root_that_holds_it_the_module_outside_is_patched(tmp_path: Path) -> None:
    """The same src layout with ``--root .`` (an absolute ``PYTHONPATH`` into the project):
    trials import their copy of ``src/``, so the edit there is tried and written."""
    root = _src_layout(tmp_path)
    src = str(root / "src")
    result = _run("fix", "scripts/train.py", "--root", ".", cwd=root, pythonpath=src)
    assert result.returncode == 0, result.stderr
    assert "Modified in place at src/mypkg/model.py:7" in result.stderr
    assert (root / "src/mypkg/model.py").read_text() != MODEL
    assert (root / "scripts/train.py").read_text() == "from mypkg.model import Net\n" + LOOP
    _trains(_run("scripts/train.py", cwd=root, pythonpath=src, autoclone=False), 5)


def test_sys_path_insert_above_the_root_names_the_root_then_patches(tmp_path: Path) -> None:
    """``sys.path.insert(0, '../lib')`` run from ``exp/``: with ``exp/`` as the root the
    module is not in the trial's world, and the line says where it is and which
    ``--root`` brings it in; with that root the write in ``lib/model.py`` is repaired."""
    root = _write(tmp_path, {
        "lib/model.py": MODEL,
        "exp/train.py": SYS_PATH + "from model import Net\n" + LOOP,
    })  # fmt: skip
    exp = root / "exp"
    missing = _run("fix", "train.py", cwd=exp)
    assert missing.returncode == 1
    last = missing.stderr.strip().splitlines()[-1]
    assert "ModuleNotFoundError: No module named 'model' (model is found in ../lib/" in last
    assert "rerun with --root ..)" in last, last
    fixed = _run("fix", "train.py", "--root", "..", cwd=exp)
    assert fixed.returncode == 0, fixed.stderr
    assert "Modified in place at lib/model.py:7" in fixed.stderr
    assert (root / "lib/model.py").read_text() != MODEL
    _trains(_run("train.py", cwd=exp, autoclone=False), 5)
