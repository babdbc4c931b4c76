"""Jupyter notebooks as scripts: the code cells as one program, and the patch put back.

A notebook is repaired as the program its code cells make when run top to bottom. The
script holds one marker comment before each cell's lines, so any line of it maps back to
``cell N, line L`` and a patched script splits back into cells without diffing. IPython
lines (``%magic``, ``!shell``, ``x = !cmd``, ``obj?``) cannot run as Python; each becomes
a harmless line that keeps the line count and carries the original text in a tag, so it
is restored verbatim when the cell is written back. Cells count from 1, markdown cells
included: ``cell 3`` is the third cell from the top, as the user scrolls.

Writing back changes only the edited cells' ``source``: the JSON is loaded as plain data
(no nbformat upgrade, no added cell ids), the sources replaced, and dumped with the file's
own indentation; outputs and metadata stay as they were. ``check`` proves it before any
write: the new text validates with ``nbformat``, every other field is unchanged, and the
program it makes is exactly the one that was verified.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoclone import report as rp
from autoclone.patch import SourceFile, check_patch

#: Marks the start of a cell in the script; the script is never shown to the user as is.
_MARKER = "# %% cell {n} (autoclone)"
_MARKER_RE = re.compile(r"^# %% cell (\d+) \(autoclone\)$")
#: Ends every line that stands for an IPython line; what follows it is the original.
TAG = "# autoclone skipped (IPython): "
#: IPython's ``display`` exists in every notebook; a script needs a stand-in.
_PRELUDE = "display = print  # autoclone: IPython's display() in a notebook"
#: Cell magics whose body is Python: the magic line is skipped, the body runs.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
_ASSIGNED_MAGIC = re.compile(r"^(?P<target>[\w.]+(?:\s*,\s*[\w.]+)*)\s*=\s*[!%]")
_HELP = re.compile(r"^(\?\??[\w.]+|[\w.]+\?\??)$")


class NotebookError(Exception):
    """The file is not a notebook autoclone can run; the message is one line."""


@dataclass(frozen=True)
class Notebook:
    """A notebook as read, and the program its code cells make."""

    path: Path
    raw: bytes
    data: dict[str, Any]  # the JSON as plain data, in the file's own key order
    script: str
    origin: tuple[tuple[int, int] | None, ...]  # script line - 1 -> (cell, line) or None
    skipped: tuple[tuple[int, int, str], ...]  # (cell, line, text) of IPython lines

    def where(self, line: int) -> tuple[int, int] | None:
        """``(cell, line)`` of a 1-based script line; None for autoclone's own lines."""
        return self.origin[line - 1] if 0 < line <= len(self.origin) else None

    def as_source(self) -> SourceFile:
        """The notebook file as read, for ``write_files`` (which checks it is unchanged)."""
        bom = self.raw.startswith(b"\xef\xbb\xbf")
        encoding = "utf-8-sig" if bom else "utf-8"
        text, digest = self.raw.decode(encoding), hashlib.sha256(self.raw).hexdigest()
        return SourceFile(self.path.resolve(), self.raw, text, encoding, "\n", digest)

    def source_file(self, root: Path, rel: str) -> SourceFile:
        """The script as the project's first file, at ``rel`` (it exists only in trials)."""
        raw = self.script.encode("utf-8")
        digest = hashlib.sha256(raw).hexdigest()
        return SourceFile(root / rel, raw, self.script, "utf-8", "\n", digest)


def is_notebook(path: Path) -> bool:
    return path.suffix.lower() == ".ipynb"


def script_name(notebook_rel: str) -> str:
    """Where the script lives in a trial: next to the notebook, named after it in full,
    so it cannot be a module the notebook imports (``analysis.ipynb.py``)."""
    return notebook_rel + ".py"


def read(path: Path) -> Notebook:
    """Read a notebook; ``NotebookError`` (one line, no path) when it cannot be run."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise NotebookError(f"cannot read: {exc.strerror}") from exc
    return parse(raw, path)


def parse(raw: bytes, path: Path) -> Notebook:
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise NotebookError("not a notebook: not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not a notebook: invalid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    problem = _invalid(data)
    if problem:
        raise NotebookError(problem)
    cells = data["cells"]
    if not any(c.get("cell_type") == "code" for c in cells):
        raise NotebookError("the notebook has no code cells: nothing to run")
    script, origin, skipped = to_script(cells)
    return Notebook(path, raw, data, script, origin, skipped)


def _invalid(data: Any) -> str | None:
    """Why the data is not an nbformat 4 notebook, in one line; None when it is."""
    import nbformat

    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        return "not a notebook: no cells"
    if data.get("nbformat") != 4:
        return (
            f"nbformat {data.get('nbformat')} notebooks are not supported (only 4): open and "
            "save it in Jupyter, or run `jupyter nbconvert --to notebook`, to upgrade it"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nbformat.validate(nbformat.from_dict(data), version=4)
    except nbformat.ValidationError as exc:
        first = str(exc.message).splitlines()[0] if exc.message else "invalid"
        return f"not a valid nbformat 4 notebook: {first}"
    return None


def _source_lines(cell: dict[str, Any]) -> tuple[list[str], bool]:
    """A cell's lines, and whether its source ended with a newline."""
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else source
    lines = text.split("\n")
    ends = text.endswith("\n")
    if ends or text == "":
        lines.pop()
    return lines, ends


def to_script(
    cells: list[dict[str, Any]],
) -> tuple[str, tuple[tuple[int, int] | None, ...], tuple[tuple[int, int, str], ...]]:
    """The code cells as one program, what each of its lines is, and the lines skipped."""
    out, skipped = [_PRELUDE], []
    origin: list[tuple[int, int] | None] = [None]
    for n, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        out.append(_MARKER.format(n=n))
        origin.append(None)
        lines, _ = _source_lines(cell)
        for i, (line, python) in enumerate(zip(lines, _as_python(lines), strict=True), start=1):
            out.append(python)
            origin.append((n, i))
            if python != line:
                skipped.append((n, i, line.strip()))
    return "\n".join(out) + "\n", tuple(origin), tuple(skipped)


def _as_python(lines: list[str]) -> list[str]:
    """Each IPython line replaced by a line Python accepts (same indentation, same count)."""
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%"):
        name = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:  # the body is not Python (%%bash, %%html)
            return [_tagged(line, "") for line in lines]
    out, open_brackets = [], 0
    for line in lines:
        out.append(line if open_brackets else _line_as_python(line))
        if not line.lstrip().startswith("#"):
            open_brackets = max(open_brackets + _bracket_delta(line), 0)
    return out


def _bracket_delta(line: str) -> int:
    """Opened minus closed brackets, roughly (strings are not parsed): enough to leave a
    line that starts with ``%`` inside a parenthesised expression (a modulo) alone."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _line_as_python(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith(("%", "!")) or _HELP.match(stripped):
        return _tagged(line, "pass  ")
    assigned = _ASSIGNED_MAGIC.match(stripped)
    if assigned:
        return _tagged(line, f"{assigned.group('target')} = None  ")
    return line


def _tagged(line: str, stand_in: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}{stand_in}{TAG}{line.strip()}" if line.strip() else line


def _restored(line: str) -> str:
    """A script line as the cell holds it: an IPython stand-in becomes the original again
    (at the stand-in's indentation, which an inserted ``with`` block may have deepened)."""
    head, tag, original = line.partition(TAG)
    if not tag:
        return line
    return head[: len(head) - len(head.lstrip())] + original


def cell_starts(script: str) -> list[int]:
    """The lines (from 1) of a notebook's script where a cell begins: a statement of one
    cell ends before the next one's marker, as the user reads it."""
    return [n for n, line in enumerate(script.split("\n"), start=1) if _MARKER_RE.match(line)]


def cells_of(script: str) -> dict[int, list[str]]:
    """The code cells' lines in a (patched) script, by cell number."""
    cells: dict[int, list[str]] = {}
    current: list[str] | None = None
    lines = script.split("\n")
    if script.endswith("\n"):  # the final newline ends the last line; it is not a line
        lines.pop()
    for line in lines:
        marker = _MARKER_RE.match(line)
        if marker:
            current = cells.setdefault(int(marker.group(1)), [])
        elif current is not None:
            current.append(_restored(line))
    return cells


def edited_cells(nb: Notebook, script: str) -> dict[int, list[str]]:
    """The cells whose lines the patched script changes, with their new lines."""
    out = {}
    for n, lines in cells_of(script).items():
        cell = nb.data["cells"][n - 1] if 0 < n <= len(nb.data["cells"]) else None
        if cell is None or cell.get("cell_type") != "code":
            raise NotebookError(f"the patched program names cell {n}, not a code cell")
        if lines != _source_lines(cell)[0]:
            out[n] = lines
    return out


def patched(nb: Notebook, script: str) -> str:
    """The notebook's new text with the patched script's cells: only their ``source``
    changes (kept a list of lines or a string, as it was), in the file's own layout."""
    data = json.loads(nb.raw.decode("utf-8-sig"))
    for n, lines in edited_cells(nb, script).items():
        cell = data["cells"][n - 1]
        text = "\n".join(lines) + ("\n" if _source_lines(cell)[1] else "")
        cell["source"] = (
            text.splitlines(keepends=True) if isinstance(cell.get("source"), list) else text
        )
    return _dumps(data, nb.raw)


def _dumps(data: dict[str, Any], raw: bytes) -> str:
    """JSON as the file had it: its indentation, ASCII escapes if it used them, its line
    ending and final newline (Jupyter writes indent 1, non-ASCII as is, one final newline)."""
    text = raw.decode("utf-8-sig")
    indent = re.match(r"\{\r?\n( *)\S", text)
    escape = text.isascii() and "\\u" in text
    out = json.dumps(data, indent=len(indent.group(1)) if indent else 1, ensure_ascii=escape)
    if "\r\n" in text:
        out = out.replace("\n", "\r\n")
    return out + ("\r\n" if text.endswith("\r\n") else "\n" if text.endswith("\n") else "")


def check(nb: Notebook, new_text: str, verified: str) -> str | None:
    """Why writing ``new_text`` would not be the verified repair; None when it would be.

    The text must be a valid nbformat 4 notebook, differ from the original only in code
    cells' sources, and make exactly the program that passed its run."""
    try:
        new = parse(new_text.encode("utf-8"), nb.path)
    except NotebookError as exc:
        return f"the patched notebook is not valid: {exc}"
    if new.script != verified:
        return "the patched notebook's cells do not make the verified program"
    if _without_sources(new.data) != _without_sources(nb.data):
        return "the patched notebook changes more than cell sources"
    return None


def _without_sources(data: dict[str, Any]) -> dict[str, Any]:
    cells = [{k: v for k, v in c.items() if k != "source"} for c in data.get("cells", [])]
    return {**data, "cells": cells}


def cell_diff(nb: Notebook, script: str, shown: str) -> str:
    """A readable diff of each edited cell, labelled so nobody feeds it to ``git apply``:
    ``--- a/analysis.ipynb (cell 3)``, hunks numbered by the cell's own lines."""
    parts = [
        f"# {shown}: the edited notebook cells, as Python; line numbers count within each "
        f"cell (apply with `autoclone fix {shown}`, not git apply)\n"
    ]
    for n, lines in sorted(edited_cells(nb, script).items()):
        old = _source_lines(nb.data["cells"][n - 1])[0]
        label = f"{shown} (cell {n})"
        diff = difflib.unified_diff(old, lines, f"a/{label}", f"b/{label}", lineterm="")
        parts.append("\n".join(diff) + "\n")
    return "".join(parts)


def relabel(text: str, script_rel: str, nb: Notebook, shown: str) -> str:
    """Every ``analysis.ipynb.py:12`` (and traceback ``"…analysis.ipynb.py", line 12``)
    in a text, as ``analysis.ipynb cell 3, line 2``."""
    name = re.escape(script_rel)
    pattern = re.compile(rf'"?(?:[^\s"]*/)?{name}(?::|", line )(\d+)')

    def place(match: re.Match[str]) -> str:
        at = nb.where(int(match.group(1)))
        return f"{shown} cell {at[0]}, line {at[1]}" if at else shown

    return re.sub(rf"\b{name}\b", shown, pattern.sub(place, text))


def frame(value: Any, script_rel: str, nb: Notebook, shown: str) -> Any:
    """A ``[file, line]`` pair of a JSON report, for the notebook's script, as
    ``{"file", "cell", "line"}``; anything else unchanged."""
    if isinstance(value, list | tuple) and len(value) == 2 and value[0] == script_rel:
        at = nb.where(int(value[1]))
        return {"file": shown, "cell": at[0] if at else None, "line": at[1] if at else None}
    return value


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class View:
    """A repair of a notebook, as the report shows it: which file of the project is the
    notebook's script, and the notebook's names (from the project root, and from where
    the user stands)."""

    nb: Notebook
    script_rel: str
    name: str
    shown: str

    @classmethod
    def of(cls, path: Path, root: Path, cwd: Path) -> View:
        """Raises ``NotebookError``, ``ValueError`` (not under root), like the repair."""
        nb = read(path)
        name = path.resolve().relative_to(root.resolve()).as_posix()
        shown = Path(os.path.relpath(path.resolve(), cwd.resolve())).as_posix()
        return cls(nb, script_name(name), name, shown)

    def text(self, text: str) -> str:
        return relabel(text, self.script_rel, self.nb, self.name)

    def frame(self, value: Any) -> Any:
        return frame(value, self.script_rel, self.nb, self.name)

    def skipped(self) -> list[str]:
        return [f"{self.name} cell {c}, line {n}: `{t}` skipped (IPython)"
                for c, n, t in self.nb.skipped]  # fmt: skip

    def editor(self, line: str) -> str:
        """``analysis.ipynb.py:12:1: error: m`` -> ``analysis.ipynb cell 3, line 2: error: m``
        (a notebook has no file line an editor could jump to)."""
        head = re.match(rf"{re.escape(self.script_rel)}:(\d+):\d+: ", line)
        at = self.nb.where(int(head.group(1))) if head else None
        if head is None or at is None:
            return line
        return f"{self.shown} cell {at[0]}, line {at[1]}: {line[head.end() :]}"


def _sections(patch: str) -> list[str]:
    return [part for part in re.split(r"(?m)^(?=diff --git )", patch) if part]


def translate(report: rp.Report, view: View) -> tuple[rp.Report, str | None]:
    """The report of a repair of the notebook's script, told in cells: texts and frames
    name ``cell N, line L``, the patch shows the edited cells, and ``changes`` write the
    notebook (the local modules it imports keep their git diff sections). Also returns
    the verified script, which ``check_report`` holds the notebook text to."""
    report.summary, report.error = view.text(report.summary), view.text(report.error)
    report.explanation, report.reference = (
        view.text(report.explanation),
        view.text(report.reference),
    )
    report.notes = [view.text(note) for note in report.notes]
    report.notes += view.skipped()
    report.diagnosis = {k: view.frame(v) for k, v in report.diagnosis.items()}
    own = Path(view.script_rel).name
    mine = [(src, text) for src, text in report.changes if src.path.name == own]
    modules = [(src, text) for src, text in report.changes if src.path.name != own]
    if report.status != rp.FIXED or not mine:
        return report, None
    if mine[0][0].text != view.nb.script:  # the notebook was edited while it was repaired
        report.status = rp.UNFIXABLE
        report.summary = f"the verified patch is not offered: {view.name} changed during the repair"
        return report, None
    verified = mine[0][1]
    kept = [p for p in _sections(report.patch) if view.script_rel not in p.split("\n", 1)[0]]
    kept_bytes = [p for p in _sections(report.patch_bytes.decode("latin-1"))
                  if view.script_rel not in p.split("\n", 1)[0]]  # fmt: skip
    cells = cell_diff(view.nb, verified, view.shown)
    report.patch = cells + "".join(kept)
    report.patch_bytes = cells.encode("utf-8") + "".join(kept_bytes).encode("latin-1")
    report.changes = [(view.nb.as_source(), patched(view.nb, verified)), *modules]
    return report, verified


def check_report(report: rp.Report, view: View, verified: str | None, cwd: Path) -> str | None:
    """The notebook's form of the ``fixed`` invariant: the notebook text is a valid
    notebook that makes the verified program, and the modules' sections dry-apply.
    ``verified`` is None when the patch leaves the notebook alone (modules only)."""
    modules = report.changes
    if verified is not None:
        (_, notebook_text), *modules = report.changes
        problem = check(view.nb, notebook_text, verified)
        if problem or not modules:
            return problem
    start = report.patch_bytes.find(b"diff --git ")
    if start < 0:
        return "the diff is empty"
    return check_patch(report.patch_bytes[start:], modules, cwd, paths=False)


def json_report(data: dict[str, Any], view: View) -> dict[str, Any]:
    """The JSON report's edits and shrunk knobs in the notebook name ``cell`` and
    ``line`` (within the cell)."""
    for key in ("edits", "shrunk"):
        for item in data.get(key) or []:
            if item.get("file") == view.script_rel:
                at = view.nb.where(int(item["line"])) or (None, None)
                item.update(file=view.name, cell=at[0], line=at[1])
    return data


#: Frames of ``explain --format json`` (``[file, line]`` pairs).
EXPLAIN_FRAMES = ("saved", "mutation", "view")


def explain_json(data: dict[str, Any], view: View) -> dict[str, Any]:
    """``explain --format json`` for a notebook: frames, texts and diagnostics in cells."""
    for key in EXPLAIN_FRAMES:
        data[key] = view.frame(data.get(key))
    for key in ("summary", "explanation"):
        data[key] = view.text(data.get(key) or "")
    if isinstance(data.get("error"), dict):
        data["error"]["message"] = view.text(data["error"]["message"])
    return data
