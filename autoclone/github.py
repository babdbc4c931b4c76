"""GitHub Actions workflow commands (``--format github``): the findings as annotations.

A workflow step that runs ``autoclone explain train.py --format github`` or ``autoclone fix
--check src/ --format github`` prints ``::error file=...,line=...::...`` lines, which
GitHub shows on the lines of the pull request. The same ``path:line:col: severity:
message`` lines that editors read are turned into those commands, escaped as the runner
parses them (``%``, CR, LF in messages; also ``:`` and ``,`` in properties).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from autoclone.sarif import located

_EDITOR = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<kind>\w+): (?P<text>.*)$")
_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, file: str, line: int, message: str, title: str = "autoclone") -> str:
    """One ``::error file=F,line=N,title=T::message`` line."""
    props = f"file={_property(file)},line={line},title={_property(title)}"
    return f"::{level} {props}::{_data(message)}"


def from_editor_lines(lines: Iterable[str]) -> list[str]:
    """Editor lines (``path:line:col: error: message``) as workflow commands; a line in
    another form becomes a plain ``::notice::``."""
    out = []
    for line in lines:
        match = _EDITOR.match(line)
        if match is None:
            out.append(f"::notice::{_data(line)}")
            continue
        level = _LEVEL.get(match["kind"], "notice")
        out.append(command(level, match["file"], int(match["line"]), match["text"]))
    return out


def for_check(report: dict[str, Any] | None, script: str, root: Path, last_line: str) -> list[str]:
    """``fix --check``'s finding for one script (``script`` as shown, its project ``root``
    relative to where the command ran): an error on the line that wrote (or failed), with
    the report's summary; none for a script without an autograd error."""
    if report is None:
        return [command("error", script, 1, last_line or "autoclone could not check this script")]
    if report.get("status") in ("no_error", "not_autograd", "bad_input"):
        return []
    diagnosis = report.get("diagnosis") or {}
    frame = diagnosis.get("mutation") or diagnosis.get("failing")
    file, line, cell = located(frame, root) if frame else (script, 1, "")
    error = report.get("error") or ""
    if isinstance(error, dict):  # ``--check``'s JSON: {"class": ..., "message": ...}
        error = f"{error.get('class', '')}: {error.get('message', '')}"
    message = cell + (str(error) or "autograd error")
    if report.get("status") == "fixed":
        message += " (autoclone fix has a verified patch for it)"
    return [command("error", file, line or 1, message)]
