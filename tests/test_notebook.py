"""Notebooks: the code cells as one program, mapped back to cells, and a real repair of a
real notebook through the CLI (real torch), its written file checked with nbformat."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from _cli import autoclone
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autoclone import notebook as nbk

FIXTURE = Path(__file__).parent.parent / "fixtures" / "notebook_inplace"


def _notebook(tmp_path: Path, *cells: nbformat.NotebookNode, name: str = "nb.ipynb") -> Path:
    path = tmp_path / name
    nbformat.write(new_notebook(cells=list(cells)), path)
    return path


def _program(path: Path) -> str:
    """The notebook's code as a person would paste it into a file (IPython lines out)."""
    cells = nbformat.read(path, as_version=4).cells
    lines = [line for c in cells if c.cell_type == "code" for line in c.source.splitlines()]
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!"))) + "\n"


def _run(code: str, where: Path) -> str:
    script = where / "program.py"
    script.write_text(code)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ipython_lines_keep_the_line_count_and_map_back_to_cells(tmp_path: Path) -> None:
    path = _notebook(
        tmp_path,
        new_markdown_cell("# title"),
        new_code_cell("%matplotlib inline\nimport math\nfiles = !ls\nmath?"),
        new_code_cell("for i in range(2):\n    !echo hi\n    x = (i\n% 2)"),
        new_code_cell("%%bash\necho one\n  echo two"),
    )
    nb = nbk.read(path)
    compile(nb.script, "nb", "exec")  # every IPython line became Python
    lines = nb.script.splitlines()
    assert nb.where(lines.index("import math") + 1) == (2, 2)
    assert nb.where(lines.index("% 2)") + 1) == (3, 4)  # a modulo, not a magic
    assert [(c, n) for c, n, _ in nb.skipped] == [(2, 1), (2, 3), (2, 4), (3, 2), (4, 1),
                                                  (4, 2), (4, 3)]  # fmt: skip
    assert nbk.cells_of(nb.script) == {
        2: ["%matplotlib inline", "import math", "files = !ls", "math?"],
        3: ["for i in range(2):", "    !echo hi", "    x = (i", "% 2)"],
        4: ["%%bash", "echo one", "  echo two"],
    }


def test_a_patched_script_changes_only_the_edited_cells_source(tmp_path: Path) -> None:
    out = new_output("stream", name="stdout", text="3\n")
    path = _notebook(
        tmp_path,
        new_code_cell("%time y = 1\nx = [1]\nx += [2]", execution_count=1, outputs=[out]),
        new_code_cell("print(len(x))", execution_count=2, outputs=[out]),
    )
    nb = nbk.read(path)
    verified = nb.script.replace("x += [2]", "with open('/dev/null'):\n    x = x + [2]")
    verified = verified.replace("pass  " + nbk.TAG, "    pass  " + nbk.TAG)  # re-indented
    text = nbk.patched(nb, verified)
    assert nbk.check(nb, text, verified) is None
    before, after = json.loads(path.read_text()), json.loads(text)
    assert after["cells"][1] == before["cells"][1] and after["metadata"] == before["metadata"]
    assert after["cells"][0]["outputs"] == before["cells"][0]["outputs"]
    assert "".join(after["cells"][0]["source"]).splitlines() == [
        "    %time y = 1", "x = [1]", "with open('/dev/null'):", "    x = x + [2]"]  # fmt: skip
    nbformat.validate(nbformat.reads(text, as_version=4))
    # anything beyond the sources, or another program, is refused before a write
    assert nbk.check(nb, text.replace('"3\\n"', '"4\\n"'), verified) is not None
    assert nbk.check(nb, text, nb.script) is not None


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "invalid JSON"),
        (
            json.dumps({"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}),
            "nbformat 3",
        ),  # fmt: skip
        (nbformat.writes(new_notebook(cells=[new_markdown_cell("text only")])), "no code cells"),
        (json.dumps({"cells": [{"cell_type": "code"}], "nbformat": 4}), "not a valid nbformat 4"),
    ],
)
def test_a_bad_notebook_is_one_line_and_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    (tmp_path / "bad.ipynb").write_text(content)
    with pytest.raises(nbk.NotebookError, match=needle):
        nbk.read(tmp_path / "bad.ipynb")
    result = autoclone("fix", "bad.ipynb", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("autoclone: error: bad.ipynb: ") and needle in line


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("analysis.ipynb", "expert.ipynb"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    return tmp_path


def test_fix_writes_the_verified_cell_back_into_the_notebook(project: Path) -> None:
    original = json.loads((project / "analysis.ipynb").read_text())
    result = autoclone("fix", "analysis.ipynb", "--format", "json", cwd=project)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "fixed"
    assert [(e["file"], e["cell"], e["line"]) for e in report["edits"]] == [
        ("analysis.ipynb", 4, 3)
    ]
    assert report["diagnosis"]["saved"] == {"file": "analysis.ipynb", "cell": 4, "line": 2}
    assert "analysis.ipynb cell 4, line 3" in report["explanation"]
    assert ".ipynb.py" not in result.stdout + result.stderr
    written = nbformat.read(project / "analysis.ipynb", as_version=nbformat.NO_CONVERT)
    nbformat.validate(written)
    after = json.loads((project / "analysis.ipynb").read_text())
    changed = [
        i for i, (a, b) in enumerate(zip(original["cells"], after["cells"], strict=True)) if a != b
    ]
    assert changed == [3]
    assert {k: v for k, v in after["cells"][3].items() if k != "source"} == {
        k: v for k, v in original["cells"][3].items() if k != "source"
    }  # outputs (the old traceback), execution count and metadata kept
    assert after["metadata"] == original["metadata"]
    patched = _run(_program(project / "analysis.ipynb"), project)
    assert patched == _run(_program(project / "expert.ipynb"), project)
    assert "final loss" in patched


def test_dry_run_prints_the_labelled_cell_diff_and_explain_names_cells(project: Path) -> None:
    before = (project / "analysis.ipynb").read_bytes()
    result = autoclone("fix", "analysis.ipynb", "--dry-run", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# analysis.ipynb: the edited notebook cells, as Python")
    assert "--- a/analysis.ipynb (cell 4)\n+++ b/analysis.ipynb (cell 4)\n" in result.stdout
    assert "-    h *= mask" in result.stdout and "+    h = h * mask" in result.stdout
    assert (project / "analysis.ipynb").read_bytes() == before
    explained = autoclone("explain", "analysis.ipynb", cwd=project)
    assert explained.returncode == 0, explained.stderr
    assert "analysis.ipynb cell 4, line 3: error: modified in place here" in explained.stdout
    assert "analysis.ipynb cell 4, line 2: note: tensor saved" in explained.stdout
    assert "`%matplotlib inline` skipped" in explained.stdout
