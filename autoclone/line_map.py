"""Lines of a patched file read as lines of the original, and the lines a patch wrote.

A patched run reports its frames in the patched files' numbering; the sites, the
diagnoses and the report speak of the original's. ``autoclone.repair`` maps one onto
the other to tell where a patched run failed and which lines its edits wrote.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from autoclone.diagnose import Frame
from autoclone.patch import SourceFile


def _edited_lines(sources: Mapping[str, SourceFile], patched: Mapping[str, str]) -> set[Frame]:
    """The lines of the patched files that the patch wrote (in their own numbering)."""
    out: set[Frame] = set()
    for rel, text in patched.items():
        original = sources[rel].text if rel in sources else ""
        lines = _line_map(original, text, written=0)
        out |= {(rel, n) for n, was in enumerate(lines, start=1) if not was}
    return out


def _line_map(original: str, patched: str, written: int | None = None) -> list[int]:
    """For each line of ``patched``, the line of ``original`` it is (or stands before);
    a line the patch wrote maps to ``written`` where that is given."""
    old, new = original.splitlines(), patched.splitlines()
    out: list[int] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += range(i1 + 1, i2 + 1)
        else:  # inserted or rewritten lines: the first original line of the block
            at = min(i1 + 1, max(len(old), 1)) if written is None else written
            out += [at] * (j2 - j1)
    return out
