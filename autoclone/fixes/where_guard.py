"""A log, root or division's input masked like its result, where a masked-out branch
has a NaN gradient.

``torch.where(mask, f(x), other)`` gets ``f(torch.where(mask, x, 1.0))`` (the "double
where"), so the branch is computed from values in ``f``'s domain where it is not used.

ZILN's loss takes ``log_y = torch.log(labels)`` for every customer and keeps the
lognormal term only where ``labels > 0``: ``torch.where(positive, log_prob, 0)``. The
forward pass is finite, but autograd differentiates the whole branch: the unused
entries' derivatives are taken at ``log(0) = -inf``, ``0 * inf`` is NaN, and anomaly
detection stops there ("Function 'DivBackward0' returned nan values"). Where the branch
reads an input through an operation with a restricted domain (log, sqrt, rsqrt,
reciprocal, a division, a fractional or negative power), that input becomes
``torch.where(mask, x, 1.0)``: the entries the outer ``where`` keeps are computed as
before and the others from 1.0, where each of those derivatives is finite, so their
gradient is the 0 the mask means (pytorch#68425; the ZILN reference feeds
``safe_labels``). Clamping (``labels.clamp_min(eps)``) changes kept entries below eps;
turning anomaly detection off lets the NaN into the weights. Judged on the failing step's
loss with grad off: the guard must leave it as it was.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from autoclone.classify import NAN_GRADIENT
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, called_name, char_col, stored
from autoclone.fixes.base import Candidate, Context, Kind, ranked
from autoclone.parsed import innermost, parsed

KIND_NAME = "where_guard"
#: ``torch.f(x)`` or ``x.f()`` with a derivative that is infinite somewhere
_DOMAIN = frozenset({"log", "log2", "log10", "sqrt", "rsqrt", "reciprocal"})
#: calls a mask may make and still be written twice (no random draw, no state)
_PURE = frozenset({
    "bool", "float", "isfinite", "isnan", "isinf", "logical_not", "logical_and",
    "logical_or", "gt", "ge", "lt", "le", "eq", "ne", "abs",
})

#: (mask source, the branch is used where the mask is true)
Guard = tuple[str, bool]
#: (names bound, statement, value) of a function's assignments
Binding = tuple[set[str], ast.stmt, ast.expr]


def _inputs(expr: ast.AST) -> Iterator[ast.expr]:
    """The inputs of ``expr``'s operations with a restricted domain."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and called_name(node.func) in _DOMAIN:
            func = node.func
            if isinstance(func, ast.Attribute) and ast.unparse(func.value) == "torch":
                if node.args:
                    yield node.args[0]
            elif isinstance(func, ast.Attribute) and not node.args:
                yield func.value
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            yield node.right
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            if _root(node.right):
                yield node.left
        elif isinstance(node, ast.Call) and called_name(node.func) == "pow":
            func = node.func
            if isinstance(func, ast.Attribute) and ast.unparse(func.value) == "torch":
                if len(node.args) == 2 and _root(node.args[1]):
                    yield node.args[0]
            elif isinstance(func, ast.Attribute) and len(node.args) == 1 and _root(node.args[0]):
                yield func.value


def _root(power: ast.expr) -> bool:
    """A literal power below 1 other than 0 (a root, a reciprocal): its derivative is
    infinite at 0."""
    try:
        value = ast.literal_eval(power)
    except ValueError:
        return False
    return isinstance(value, int | float) and value < 1 and value != 0


def _assignments(fn: ast.AST) -> Iterator[Binding]:
    """(names bound, statement, value) of ``fn``'s assignments."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            yield names, node, node.value


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _local_names(fn: ast.AST) -> set[str]:
    """The names ``fn`` binds or takes: an input made of none of them is a constant of the
    program (``2 * math.pi``), not a value that can leave the domain."""
    params = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    return params | stored(fn)


def _slice(bindings: list[Binding], branch: ast.expr, line: int) -> list[ast.AST]:
    """The branch and, transitively, the values assigned before ``line`` (``bindings``:
    the function's) to the names it reads."""
    found: list[ast.AST] = [branch]
    todo, seen = _names(branch), set()
    while todo:
        name = todo.pop()
        seen.add(name)
        for names, stmt, value in bindings:
            if name in names and stmt.lineno < line and stmt not in found:
                found.append(stmt)
                todo |= _names(value) - seen
    return found


def _branches(fn: ast.AST) -> Iterator[tuple[ast.Call, ast.expr, ast.expr, bool]]:
    """(call, mask, branch, the branch is used where the mask is true) of ``fn``'s
    ``torch.where(mask, a, b)`` and ``a.masked_fill(mask, value)``."""
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call) or node.keywords:
            continue
        name = ast.unparse(node.func)
        if name == "torch.where" and len(node.args) == 3:
            yield node, node.args[0], node.args[1], True
            yield node, node.args[0], node.args[2], False
        elif called_name(node.func) == "masked_fill" and len(node.args) == 2:
            assert isinstance(node.func, ast.Attribute)
            yield node, node.args[0], node.func.value, False


def _mask_usable(bindings: list[Binding], mask: ast.expr, at: int, until: int) -> bool:
    """The mask can be written again at line ``at``: no random draw or state in it, and
    every name it reads bound before ``at`` (or outside ``fn``) and not bound again
    before ``until``."""
    if any(isinstance(n, ast.Call) and called_name(n.func) not in _PURE for n in ast.walk(mask)):
        return False
    for names, stmt, _ in bindings:
        if names & _names(mask) and at <= stmt.lineno < until:
            return False
    return True


def _site(
    file: str, text: str, x: ast.expr, guard: Guard, masking: ast.Call
) -> Site | None:
    """``x`` replaced by ``torch.where(mask, x, 1.0)`` (the other way round where the
    branch is used where the mask is false); None for an input over several lines."""
    if x.lineno != x.end_lineno or isinstance(x, ast.Constant):
        return None
    mask, used_if_true = guard
    line_text = text.splitlines()[x.lineno - 1]
    col, end = char_col(line_text, x.col_offset), char_col(line_text, x.end_col_offset or 0)
    source = line_text[col:end]
    pair = f"{source}, 1.0" if used_if_true else f"1.0, {source}"
    new = f"torch.where({mask}, {pair})"
    target = f"{masking.lineno}:{called_name(masking.func)}"  # read back by ``why``
    return Site(id=f"{file}:{x.lineno}:{col}:{KIND_NAME}", file=file, line=x.lineno, col=col,
                kind=STATEMENT, target=target, code=new, start=(x.lineno, col),
                end=(x.lineno, col), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(x.lineno, col, new, delete=end - col),))  # fmt: skip


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """One guard per restricted-domain input of the ``where`` branch that holds the
    operation whose gradient was NaN (``found.saved``), in the order of the lines."""
    if found.saved is None:
        return []
    file, line = found.saved
    text = ctx.texts.get(file, "")
    if not text or "import torch" not in text:
        return []
    fn = innermost(text, line, FUNCTIONS) or parsed(text)
    out: dict[str, Site] = {}
    bindings, local = list(_assignments(fn)), _local_names(fn)
    for call, mask, branch, used_if_true in _branches(fn):
        held = _slice(bindings, branch, call.lineno)
        if not any(n.lineno <= line <= (n.end_lineno or n.lineno) for n in held):  # type: ignore[attr-defined]
            continue
        guard = (ast.unparse(mask), used_if_true)
        for node in held:
            for x in _inputs(node):
                if _names(x) & local and _mask_usable(bindings, mask, x.lineno, call.lineno):
                    site = _site(file, text, x, guard, call)
                    if site is not None:
                        out.setdefault(site.id, site)
    return sorted(out.values(), key=lambda s: (s.line, s.col))


class WhereGuard(Kind):
    name = KIND_NAME
    classes = (NAN_GRADIENT,)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        """Each guard alone, the first line first (the input nearest the data), then all
        of them together."""
        alone = [[s] for s in sites(found, ctx)]
        together = [[s for [s] in alone]] if len(alone) > 1 else []
        return ranked(alone + together)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        line, masking = site.target.split(":")
        at = where((site.file, int(line)), lines)
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the {masking} "
            f"at {at} keeps this value only where its mask says, but autograd "
            "differentiates the branch everywhere, and where the input is outside the "
            "operation's domain the unused entries' gradient is 0 × inf = NaN (raised at "
            f"{where(found.saved, lines)}). Masking the input too leaves every used entry "
            "as it was and computes the unused ones from 1.0, so their gradient is 0."
        )

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "masking the operation's input changed the values the mask keeps (the branch "
            "mixes its entries before the mask, as a softmax does), or left a NaN: which "
            "value the dropped entries take is a choice about the model"
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "Mask the input of the operation as well as its result "
            "(torch.where(mask, x, 1.0) inside, torch.where(mask, f(...), 0) outside)"
        )


KIND = WhereGuard()
