"""SARIF 2.1.0 logs (``--format sarif``): the findings as code-scanning tools read them.

GitHub code scanning (``github/codeql-action/upload-sarif``), GitLab, Azure DevOps and the
SARIF viewers of editors read one JSON log: the tool with its rules, then one result per
finding with its file and line. ``autoclone explain`` and ``autoclone fix --check`` print
such a log: a rule per error class (``inplace_version``, ``backward_twice``, ... from
``classify.DESCRIPTIONS``, so a new class gets its rule), a result on the line that wrote
(or failed), and the lines that saved the tensor or built the graph as the result's
related locations, so a viewer shows them beside it. ``explain`` builds it from the same
``path:line:col: severity: message`` lines editors read; ``--check`` from each script's
report, as ``github.py`` does. Paths are relative to the current directory (the base
``%SRCROOT%``): run it from the repository's root for code scanning.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

from autoclone import __version__
from autoclone import classify as cls
from autoclone.explain import Explanation

#: The OASIS schema this log follows (2.1.0 with its errata), as ``$schema`` names it.
SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
BASE = "%SRCROOT%"
#: A write autograd cannot see (a fused optimizer step, ``.data``): ``explain``'s warnings.
SILENT_WRITE = "silent_write"
#: ``--check`` could not tell: the script's run timed out, or its ``fix`` ended without a
#: report. ``--check`` fails on it, so it is an error too.
UNCHECKED = "unchecked"
_EXTRA_RULES = {
    SILENT_WRITE: ("warning", "a write into a tensor saved for backward that autograd cannot "
                   "see (a fused optimizer step, .data): backward silently uses the new values"),
    UNCHECKED: ("error", "autoclone could not check the script (it did not end within "
                "--timeout, or its check ended without a report)"),
}  # fmt: skip
_EDITOR = re.compile(r"^(?P<file>.+?):(?P<line>\d+):\d+: (?P<kind>\w+): (?P<text>.*)$")
_CELL = re.compile(r"^(?P<file>.+?) (?P<cell>cell \d+, line \d+): (?P<kind>\w+): (?P<text>.*)$")
_LEVELS = ("error", "warning", "note")
#: ``--check``'s related lines: the report's diagnosis key, and what that line did.
_RELATED = (
    ("saved", "tensor saved for backward here"),
    ("view", "multi-output view created here"),
    ("carry_producer", "graph built here and still used after the backward call that freed it"),
    ("previous_backward", "this backward call already went through the graph and freed it"),
)


@dataclass(frozen=True)
class Finding:
    """One place to show: a file (``""`` for none), its line (None for a notebook, whose
    cells have no file line: the cell is in ``text``), ``error``/``warning``/``note``."""

    file: str
    line: int | None
    level: str
    text: str


def rules() -> list[dict[str, Any]]:
    """The driver's rules: every error class ``classify`` names, then the two others."""
    described = {name: ("error", text) for name, text in cls.DESCRIPTIONS.items()}
    return [
        {
            "id": name,
            "shortDescription": {"text": text},
            "defaultConfiguration": {"level": level},
        }
        for name, (level, text) in {**described, **_EXTRA_RULES}.items()
    ]


def _homepage() -> str | None:
    """The project's URL from the installed metadata (a ``[project.urls]`` entry), if any:
    ``informationUri`` must be a real address, so none is made up."""
    try:
        meta = metadata.metadata("autoclone")
    except metadata.PackageNotFoundError:
        return None
    urls = [entry.partition(",")[2].strip() for entry in meta.get_all("Project-URL") or []]
    return next((u for u in [*urls, *(meta.get_all("Home-page") or [])] if u), None)


def log(
    results: Sequence[dict[str, Any]], cwd: Path, problems: Sequence[str] = ()
) -> dict[str, Any]:
    """The whole log: one run of autoclone, its rules, the results (each ``ruleIndex``
    filled in), and ``problems`` (bad input) as notifications of a failed execution."""
    table = rules()
    index = {rule["id"]: i for i, rule in enumerate(table)}
    driver: dict[str, Any] = {"name": "autoclone", "version": __version__, "rules": table}
    homepage = _homepage()
    if homepage:
        driver["informationUri"] = homepage
    invocation: dict[str, Any] = {"executionSuccessful": not problems}
    if problems:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": text}} for text in problems
        ]
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {BASE: {"uri": _folder_uri(cwd)}},
        "invocations": [invocation],
        "results": [{**r, "ruleIndex": index[r["ruleId"]]} for r in results],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _folder_uri(folder: Path) -> str:
    """``file:///work/repo/``: a base URI must end with a slash (``/`` itself already does)."""
    uri = folder.resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def dumps(data: dict[str, Any]) -> str:
    """The log as printed: indented JSON, one newline at the end."""
    return json.dumps(data, indent=2) + "\n"


def location(finding: Finding, number: int | None = None) -> dict[str, Any]:
    """A SARIF location: the file as a URI relative to ``%SRCROOT%`` (percent-encoded,
    forward slashes), its line; a related location gets an ``id`` and its own message."""
    out: dict[str, Any] = {}
    if number is not None:
        out["id"] = number
    if finding.file:
        path = finding.file.replace(os.sep, "/")
        artifact = (
            {"uri": Path(finding.file).as_uri()}
            if os.path.isabs(finding.file)
            else {"uri": quote(path, safe="/"), "uriBaseId": BASE}
        )
        physical: dict[str, Any] = {"artifactLocation": artifact}
        if finding.line is not None:
            physical["region"] = {"startLine": max(finding.line, 1)}
        out["physicalLocation"] = physical
    if number is not None:
        out["message"] = {"text": finding.text}
    return out


def result(rule: str, finding: Finding, related: Sequence[Finding] = ()) -> dict[str, Any]:
    """One result: the rule, the level, the message, where, and the lines beside it. The
    message links each related line (``[text](id)``): GitHub shows a related location
    only where the message embeds it."""
    links = [f"[{_link_text(f.text)}]({i})" for i, f in enumerate(related, 1)]
    out: dict[str, Any] = {
        "ruleId": rule,
        "level": finding.level,
        "message": {"text": finding.text + (f" (see {', '.join(links)})" if links else "")},
        "locations": [location(finding)] if finding.file else [],
    }
    if related:
        out["relatedLocations"] = [location(f, i) for i, f in enumerate(related, 1)]
    return out


def _link_text(text: str) -> str:
    """Backslashes and square brackets escaped, as SARIF's plain-text links require."""
    return re.sub(r"([\\\[\]])", r"\\\1", text)


def parse(line: str) -> Finding:
    """An editor line (``path:line:col: severity: message``, or a notebook's ``a.ipynb
    cell 3, line 2: severity: message``) as a finding; any other line is a bare note."""
    match = _EDITOR.match(line)
    if match is not None:
        return Finding(match["file"], int(match["line"]), _level(match["kind"]), match["text"])
    match = _CELL.match(line)
    if match is not None:
        text = f"{match['cell']}: {match['text']}"
        return Finding(match["file"], None, _level(match["kind"]), text)
    return Finding("", None, "note", line)


def _level(kind: str) -> str:
    return kind if kind in _LEVELS else "note"


def from_editor_lines(lines: Iterable[str], error_class: str | None) -> list[dict[str, Any]]:
    """``explain``'s editor lines as results: each error under its class's rule with the
    notes (the saving line, the view, the graph's builder) as related locations; each
    warning a ``silent_write``; notes stand alone only where no error took them."""
    found = [parse(line) for line in lines]
    rule = error_class if error_class in cls.DESCRIPTIONS else cls.NOT_AUTOGRAD
    notes = [f for f in found if f.level == "note"]
    errors = [result(rule, f, notes) for f in found if f.level == "error"]
    warnings = [result(SILENT_WRITE, f) for f in found if f.level == "warning"]
    return errors + warnings + ([] if errors else [result(rule, f) for f in notes])


def explained(outcome: Explanation, cwd: Path) -> dict[str, Any]:
    """``explain --format sarif``: its editor lines (paths from ``cwd``) as one log."""
    error_class = outcome.diagnosis.error_class if outcome.diagnosis else None
    problems = [outcome.summary] if outcome.status == "bad_input" else []
    return log(from_editor_lines(outcome.editor, error_class), cwd, problems)


def located(frame: Any, root: Path) -> tuple[str, int | None, str]:
    """A report's ``[file, line]`` (a notebook's ``{"file", "cell", "line"}``), its file
    relative to the project ``root``, as a file shown from where the command ran, a line,
    and a prefix for the message (the cell)."""
    if isinstance(frame, dict):
        cell = f"cell {frame.get('cell')}, line {frame.get('line')}: "
        return (root / str(frame.get("file"))).as_posix(), None, cell
    return (root / str(frame[0])).as_posix(), int(frame[1]), ""


def _related(diagnosis: dict[str, Any], root: Path) -> list[Finding]:
    """The lines beside the failure, as ``explain``'s notes name them."""
    out = []
    for key, text in _RELATED:
        frame = diagnosis.get(key)
        if not frame or (key == "previous_backward" and frame == diagnosis.get("failing")):
            continue
        if key == "saved":
            text += f" by {diagnosis.get('saved_op') or 'an op'}"
        file, line, cell = located(frame, root)
        out.append(Finding(file, line, "note", cell + text))
    return out


def for_check(
    report: dict[str, Any] | None, script: str, root: Path, last_line: str
) -> list[dict[str, Any]]:
    """``fix --check``'s result for one script (``script`` as shown, its project ``root``
    relative to where the command ran): an error on the line that wrote (or failed) with
    the related lines; ``unchecked`` for a timeout or a missing report; none without an
    autograd error."""
    if report is None:
        text = last_line or "autoclone could not check this script"
        return [result(UNCHECKED, Finding(script, 1, "error", text))]
    error = report.get("error") or {}
    rule = error.get("class") if isinstance(error, dict) else None
    if report.get("status") in ("no_error", "not_autograd", "bad_input"):
        return []
    if report.get("status") == "timeout" or rule not in cls.DESCRIPTIONS:
        summary = str(report.get("summary") or "autoclone could not check this script")
        return [result(UNCHECKED, Finding(script, 1, "error", summary))]
    diagnosis = report.get("diagnosis") or {}
    frame = diagnosis.get("mutation") or diagnosis.get("failing")
    file, line, cell = located(frame, root) if frame else (script, 1, "")
    text = ("modified in place here: " if diagnosis.get("mutation") else "") + str(
        error.get("message") or "autograd error"
    )
    if report.get("status") == "fixed":
        text += " (autoclone fix has a verified patch for it)"
    found = Finding(file, line, "error", cell + text)
    return [result(str(rule), found, _related(diagnosis, root))]


def checked(
    scripts: Iterable[tuple[dict[str, Any] | None, str, Path, str]], cwd: Path
) -> dict[str, Any]:
    """``fix --check --format sarif``: every script's results in one log; a script that
    was bad input is a notification (the check itself failed there)."""
    results, problems = [], []
    for report, script, root, last_line in scripts:
        results += for_check(report, script, root, last_line)
        if report is not None and report.get("status") == "bad_input":
            problems.append(f"{script}: {report.get('summary', 'bad input')}")
    return log(results, cwd, problems)
