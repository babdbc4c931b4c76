"""A loop that writes into each row of a tensor in place (``for t, m, s in zip(x, mean,
std): t.sub_(m).div_(s)``) rewritten to build the result out of place:
``x = torch.stack([t.sub(m).div(s) for t, m, s in zip(x, mean, std)])``.

Iterating a tensor unbinds it: every ``t`` is one of several views of ``x``, and autograd
forbids writing into those ("Output 0 of UnbindBackward0 is a view and is being modified
inplace"). A clone of ``t`` would write into copies and leave ``x`` as it was, so the
only edits that keep the numbers compute the rows anew and stack them. Judged like the
other in-place kinds: the failing step's values computed with grad off.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.classify import MULTI_OUTPUT_VIEW
from autoclone.codemods.rewrites import imports_torch
from autoclone.codemods.sites import OUT_OF_PLACE, OUT_OF_PLACE_METHODS, STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.parsed import parsed


def _chain(node: ast.expr, row: str) -> list[str] | None:
    """The in-place methods of ``row.a_(...).b_(...)``, innermost first, or None."""
    names: list[str] = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = node.func.attr
        if not name.endswith("_") or name[:-1] not in OUT_OF_PLACE_METHODS:
            return None
        names.append(name)
        node = node.func.value
    ok = isinstance(node, ast.Name) and node.id == row and names
    return list(reversed(names)) if ok else None


def loop_rows(loop: ast.For) -> tuple[str, ast.expr] | None:
    """``(row, tensor)`` of ``for row in tensor`` or ``for row, ... in zip(tensor, ...)``,
    the tensor a name or ``self.x``."""
    target, source = loop.target, loop.iter
    if (isinstance(source, ast.Call) and isinstance(source.func, ast.Name)
            and source.func.id == "zip" and source.args
            and isinstance(target, ast.Tuple)):  # fmt: skip
        target, source = target.elts[0], source.args[0]
    plain = isinstance(source, ast.Name) or (
        isinstance(source, ast.Attribute) and isinstance(source.value, ast.Name))  # fmt: skip
    return (target.id, source) if isinstance(target, ast.Name) and plain else None


def _rows_of(loop: ast.For) -> tuple[str, str] | None:
    """``loop_rows`` where the tensor is a name, which the rewrite rebinds."""
    rows = loop_rows(loop)
    return (rows[0], rows[1].id) if rows and isinstance(rows[1], ast.Name) else None


def _replace_lines(
    lines: list[str], first: int, last: int, col: int, new: list[str]
) -> list[TextEdit] | None:
    """The loop's one or two lines replaced by the statement (on one line, or split where
    the comprehension's ``for`` starts): no line is left blank."""
    if last == first:
        return [TextEdit(first, col, " ".join(new), delete=len(lines[first - 1]) - col)]
    if last != first + 1:
        return None
    return [TextEdit(first, col, new[0], delete=len(lines[first - 1]) - col),
            TextEdit(last, 0, new[1], delete=len(lines[last - 1]))]  # fmt: skip


def stack_rewrite(file: str, text: str, line: int) -> Site | None:
    """The rewrite of the one-statement ``for`` loop whose body is ``line``."""
    loops = [n for n in ast.walk(parsed(text)) if isinstance(n, ast.For)
             and len(n.body) == 1 and n.body[0].lineno == line and not n.orelse]  # fmt: skip
    if not loops or not imports_torch(text):
        return None
    loop, lines = loops[0], text.splitlines()
    rows = _rows_of(loop)
    body = loop.body[0]
    chain = _chain(body.value, rows[0]) if rows and isinstance(body, ast.Expr) else None
    value = ast.get_source_segment(text, body.value) if isinstance(body, ast.Expr) else None
    if rows is None or chain is None or not value or body.end_lineno != line:
        return None
    for name in chain:
        value = re.sub(rf"\.{name}\(", f".{name[:-1]}(", value, count=1)
    head = f"for {ast.get_source_segment(text, loop.target)} in "
    head += ast.get_source_segment(text, loop.iter) or ""
    indent = lines[loop.lineno - 1][: loop.col_offset]
    opening = f"{rows[1]} = torch.stack(["
    code = f"{opening}{value} {head}])"
    split = [f"{opening}{value}", " " * (len(indent) + len(opening)) + f"{head}])"]
    edits = _replace_lines(lines, loop.lineno, line, len(indent), split)
    if edits is None:
        return None
    return Site(id=f"{file}:{loop.lineno}:0:stack", file=file, line=loop.lineno, col=len(indent),
                kind=STATEMENT, target=rows[1], code=code, start=(loop.lineno, len(indent)),
                end=(loop.lineno, len(indent)), depth=0, indent=indent, fix=OUT_OF_PLACE,
                rewrite=tuple(edits))  # fmt: skip


class StackViews(Kind):
    name = "stack_views"

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == MULTI_OUTPUT_VIEW and is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        write = found.mutation or found.failing
        site = stack_rewrite(write[0], ctx.texts.get(write[0], ""), write[1]) if write else None
        return [Candidate(-1.5, (site,))] if site else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: iterating "
            f"`{site.target}` yields views of it that autograd forbids writing into; the rows "
            "are computed out of place and stacked into a new tensor with the same numbers."
        )


KIND = StackViews()
