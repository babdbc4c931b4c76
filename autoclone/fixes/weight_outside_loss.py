"""An elementwise ``weight=`` computed from a loss's own input, applied outside the loss
(``(w * F.binary_cross_entropy_with_logits(x, y, reduction="none")).sum()``).

``binary_cross_entropy(_with_logits)`` has no derivative for ``weight`` and refuses one
that requires grad. Where the weight is made from the very input the loss scores (a
focal factor ``(1 - pt) ** gamma`` from ``logits.sigmoid()``), the loss the code writes
is a function of that input through the weight too; multiplying the unreduced loss by
the weight and reducing it as the call did is the same number, now differentiated as
written. A weight that is not made from the input (a learned class weight, a gathered
table) is left alone: detaching it or training it is the author's call, and the report
says so. Judged like a cut: K steps with finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import NONDIFF_ARGUMENT
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, argument_cut, char_col, stored
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.parsed import innermost, parsed

KIND_NAME = "weight_outside_loss"
_LOSSES = ("binary_cross_entropy_with_logits", "binary_cross_entropy")
_REDUCE = {"mean": ".mean()", "sum": ".sum()", "none": ""}
_PRIMARY = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)


def _weight(call: ast.Call) -> ast.expr | ast.keyword | None:
    """The ``weight`` argument (third positional or keyword), if it is the only
    argument past the target besides ``reduction``."""
    extra = [k for k in call.keywords if k.arg not in ("weight", "reduction")]
    if extra or len(call.args) > 3 or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    keyword = next((k for k in call.keywords if k.arg == "weight"), None)
    return call.args[2] if len(call.args) == 3 else keyword


def _reduction(call: ast.Call) -> str | None:
    """The literal reduction (``mean`` when absent), None when it is not a literal."""
    keyword = next((k for k in call.keywords if k.arg == "reduction"), None)
    if keyword is None:
        return "mean"
    value = keyword.value
    return value.value if isinstance(value, ast.Constant) and value.value in _REDUCE else None


def _reads(fn: ast.AST, expr: ast.expr) -> set[str]:
    """The names ``expr`` reads, through the assignments of ``fn`` (flow-insensitive)."""
    made: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        made.setdefault(n.id, set()).update(names)
    seen: set[str] = set()
    todo = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(made.get(name, ()))
    return seen


def _from_input(fn: ast.AST, call: ast.Call, weight: ast.expr) -> bool:
    """The weight is made from a name the loss's input is made of (not that name alone)."""
    if isinstance(weight, ast.Name) and weight.id not in stored(fn):
        return False
    inputs = {n.id for n in ast.walk(call.args[0])
              if isinstance(n, ast.Name) and n.id not in ("self", "cls")}  # fmt: skip
    return bool(inputs & _reads(fn, weight))



def _loss_calls(fn: ast.AST, line: int) -> list[ast.Call]:
    """The calls of a binary cross-entropy loss in ``fn`` whose lines hold ``line``."""
    out = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _LOSSES and node.lineno <= line <= (node.end_lineno or node.lineno):
            out.append(node)
    return out


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The rewrite of the failing line's loss call, where its ``weight`` is made from
    the loss's input ("... with respect to argument 'weight'")."""
    if found.failing is None or "argument 'weight'" not in found.message:
        return []
    file, line = found.failing
    text = ctx.texts.get(file, "")
    fn = innermost(text, line, FUNCTIONS) if text else None
    scope = fn if fn is not None else (parsed(text) if text else None)
    out: list[Site] = []
    if scope is None:
        return out
    for call in _loss_calls(scope, line):
        weight = _weight(call)
        value = weight.value if isinstance(weight, ast.keyword) else weight
        reduction = _reduction(call)
        if value is None or reduction is None or len(call.args) < 2:
            continue
        if value.lineno == value.end_lineno and _from_input(scope, call, value):
            out.append(_site(file, text, call, weight, reduction))  # type: ignore[arg-type]
    return out


def _site(file: str, text: str, call: ast.Call, weight: ast.expr | ast.keyword,
          reduction: str) -> Site:  # fmt: skip
    """``(w * loss(x, y, reduction="none")).sum()`` as text edits of the call."""
    lines = text.splitlines()
    value = weight.value if isinstance(weight, ast.keyword) else weight
    w = ast.get_source_segment(text, value) or ""
    factor = w if isinstance(value, _PRIMARY) else f"({w})"
    edits = [TextEdit(call.lineno, char_col(lines[call.lineno - 1], call.col_offset),
                      f"({factor} * ")]  # fmt: skip
    edits += _without_weight(lines, call, weight, reduction)
    end = call.end_lineno or call.lineno
    edits.append(TextEdit(end, char_col(lines[end - 1], call.end_col_offset or 0),
                          f"){_REDUCE[reduction]}"))  # fmt: skip
    line = lines[call.lineno - 1]
    col = char_col(line, call.col_offset)
    call_text = ast.get_source_segment(text, call) or ""
    code = f'({factor} * {call_text.split("(")[0]}(..., reduction="none")){_REDUCE[reduction]}'
    return Site(id=f"{file}:{call.lineno}:{col}:{KIND_NAME}", file=file, line=call.lineno,
                col=col, kind=STATEMENT, target=w, code=code, start=(call.lineno, col),
                end=(call.lineno, col), depth=0, fix=KIND_NAME,
                rewrite=tuple(sorted(edits)))  # fmt: skip


def _span(lines: Sequence[str], node: ast.AST) -> tuple[int, int, int]:
    """(line, first character column, last character column) of a one-line node."""
    line = lines[node.lineno - 1]  # type: ignore[attr-defined]
    return (node.lineno, char_col(line, node.col_offset),  # type: ignore[attr-defined]
            char_col(line, node.end_col_offset))  # type: ignore[attr-defined]  # fmt: skip


def _without_weight(lines: Sequence[str], call: ast.Call, weight: ast.expr | ast.keyword,
                    reduction: str) -> list[TextEdit]:  # fmt: skip
    """The weight argument dropped and the reduction made ``"none"``: where the call
    names no reduction, the weight's own text becomes ``reduction="none"``."""
    line, start, end = _span(lines, weight)
    keyword = next((k for k in call.keywords if k.arg == "reduction"), None)
    if keyword is None:
        return [TextEdit(line, start, 'reduction="none"', delete=end - start)]
    r_line, r_start, r_end = _span(lines, keyword.value)
    edits = [TextEdit(r_line, r_start, '"none"', delete=r_end - r_start)]
    cut = argument_cut(lines, call, weight)
    if cut is not None:
        return [*edits, cut]
    dropped = "weight=None" if isinstance(weight, ast.keyword) else "None"
    return [*edits, TextEdit(line, start, dropped, delete=end - start)]


class WeightOutsideLoss(Kind):
    name = KIND_NAME
    classes = (NONDIFF_ARGUMENT,)
    reference = NONE

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: the weight `{site.target}` applied outside the loss at {site.file}:"
            f"{site.line} (`{site.code}`): the loss cannot differentiate its weight argument, "
            f"and `{site.target}` is made from the loss's own input, so the loss as written "
            "depends on it; the unreduced loss times the weight, reduced as the call did, is "
            "the same number, now differentiated through the weight too."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.target}`" for s in chosen)
        return [f"if {names} is meant as a constant factor, pass it detached instead "
                "(`.detach()`): the loss is the same number but trains differently"]  # fmt: skip


KIND = WeightOutsideLoss()
