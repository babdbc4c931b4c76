"""A tensor's rows taken by index where a loop over them writes into a row in place.

``for b in boxes`` (or ``zip(boxes, ...)``) becomes ``for b in (boxes[i] for i in
range(len(boxes)))`` where the body writes into the row, or part of it: per-image box
clipping, ``b[:, 0::2].clamp_(0, w)`` (pytorch#47899).

Iterating a tensor unbinds it: every row is one of several views of the tensor, and
autograd forbids writing into those ("Output 0 of Slice is a view ... of a function that
returns multiple views"). A row taken by index is a view of its own, which may be written:
the write reaches the tensor as the loop meant, recorded by autograd (``CopySlices``). A
clone of the row would write into a copy and leave the tensor as it was. Where the body
rewrites whole rows out of place, ``stack_views`` builds the result anew instead. Judged
like the other in-place kinds: the failing step's values computed with grad off.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import MULTI_OUTPUT_VIEW
from autoclone.codemods.sites import OUT_OF_PLACE, STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import char_col
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.fixes.stack_views import loop_rows
from autoclone.parsed import parsed

KIND_NAME = "index_rows"


def _writes_row(stmt: ast.stmt, row: str) -> bool:
    """The statement writes ``row`` or a part of it in place: ``row[...].clamp_(...)``,
    ``row.mul_(...)``, ``row[...] = ...``, ``row[...] += ...``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_"):
            base = func.value.value if isinstance(func.value, ast.Subscript) else func.value
            return isinstance(base, ast.Name) and base.id == row
    targets = stmt.targets if isinstance(stmt, ast.Assign) else (
        [stmt.target] if isinstance(stmt, ast.AugAssign) else [])  # fmt: skip
    return any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
               and t.value.id == row for t in targets)  # fmt: skip


def _index_name(loop: ast.For) -> str:
    used = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name)}
    return next(name for name in ("i", "j", "k", "row_index") if name not in used)


def index_rewrite(file: str, text: str, line: int) -> Site | None:
    """The rewrite of the innermost ``for`` loop over a tensor's rows around ``line``,
    where ``line`` writes into the row."""
    try:
        tree = parsed(text)
    except SyntaxError:
        return None
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)
             and n.lineno < line <= (n.end_lineno or n.lineno)]  # fmt: skip
    if not loops:
        return None
    loop = max(loops, key=lambda n: n.lineno)
    rows = loop_rows(loop)
    writes = [s for s in ast.walk(loop) if isinstance(s, ast.stmt) and s.lineno == line]
    if rows is None or not any(_writes_row(s, rows[0]) for s in writes):
        return None
    source = rows[1]
    if source.lineno != source.end_lineno:
        return None
    tensor = ast.get_source_segment(text, source) or ""
    index = _index_name(loop)
    new = f"({tensor}[{index}] for {index} in range(len({tensor})))"
    line_text = text.splitlines()[source.lineno - 1]
    col = char_col(line_text, source.col_offset)
    code = (line_text[:col] + new + line_text[col + len(tensor):]).strip()
    return Site(id=f"{file}:{source.lineno}:{col}:{KIND_NAME}", file=file, line=source.lineno,
                col=col, kind=STATEMENT, target=tensor, code=code, start=(source.lineno, col),
                end=(source.lineno, col), depth=0, fix=OUT_OF_PLACE,
                rewrite=(TextEdit(source.lineno, col, new, delete=len(tensor)),))  # fmt: skip


class IndexRows(Kind):
    name = KIND_NAME

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == MULTI_OUTPUT_VIEW and is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        write = found.mutation or found.failing
        site = index_rewrite(write[0], ctx.texts.get(write[0], ""), write[1]) if write else None
        return [Candidate(-1.4, (site,))] if site else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: iterating "
            f"`{site.target}` unbinds it into views that autograd forbids writing into; a row "
            "taken by index is a view of its own, so the write reaches the tensor as the loop "
            "meant, and autograd records it."
        )


KIND = IndexRows()
