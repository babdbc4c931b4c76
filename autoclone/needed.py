"""Whether an edit set could have changed a run before it failed: the lines its text
edits put code on, against the lines the run executed (``autoclone.executed``).

A multi-conflict patch keeps an edit per conflict. The repair checks each is needed by a
run without it, unless the lines tell already: where no edit of a later conflict is on a
line the traced run had executed when it met this conflict, the script without this
conflict's edit runs as that traced run did up to there, and fails the same way. The
reading is conservative: an edit whose place cannot be told (the first statement of an
``else:`` block, which has no line of its own to execute) counts as executed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from autoclone.codemods.render import patch_edits
from autoclone.codemods.sites import Site
from autoclone.edits import TextEdit

Line = tuple[str, int]
#: Clause headers that continue a compound statement; ``else:`` and ``finally:`` execute
#: nothing of their own, so a statement first in their block has no line to be told by.
_CLAUSES = ("else", "elif", "except", "finally")
_SILENT = ("else:", "finally:", "try:")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _anchor(lines: Sequence[str], line: int, indent: int) -> int | None:
    """The line that runs before a statement inserted at ``indent`` before ``line``: the
    start of the statement before it in its block, else the block's header (None where
    that header executes nothing of its own)."""
    for at in range(line - 1, 0, -1):
        text = lines[at - 1] if at <= len(lines) else ""
        if not _code(text) or _indent(text) > indent:
            continue
        stripped = text.strip()
        if _indent(text) == indent and stripped.startswith(_CLAUSES):
            continue  # a clause of the statement before: its start is further up
        if _indent(text) < indent and stripped.startswith(_SILENT):
            return None
        return at
    return None


def _edit_lines(edit: TextEdit, lines: Sequence[str]) -> set[int] | None:
    """Lines whose execution the edit's code rides on (None: cannot be told)."""
    inserts = edit.col == 0 and edit.text.endswith("\n") and not edit.drop_line
    if not inserts:
        return {edit.line}
    own = lines[edit.line - 1] if 0 < edit.line <= len(lines) else ""
    indent = _indent(edit.text)
    if _code(own) and _indent(own) == indent and not own.strip().startswith(_CLAUSES):
        return {edit.line}  # just before a statement of its block: runs when it does
    anchor = _anchor(lines, edit.line, indent)
    return None if anchor is None else {anchor, edit.line}


def touched(site: Site, lines: Sequence[str]) -> set[int] | None:
    """Lines of ``site.file`` the edit's code runs with (None: cannot be told)."""
    out = set(range(site.start[0], site.end[0] + 1)) | {site.line}
    for edit in patch_edits([site]):
        more = _edit_lines(edit, lines)
        if more is None:
            return None
        out |= more
    return out


def untouched(
    sites: Collection[Site], executed: Collection[Line] | None, texts: Mapping[str, list[str]]
) -> bool:
    """None of ``sites`` puts code on a line the run had ``executed`` (known)."""
    if executed is None:
        return False
    ran = set(executed)
    for site in sites:
        lines = touched(site, texts.get(site.file, []))
        if lines is None or any((site.file, n) in ran for n in lines):
            return False
    return True
