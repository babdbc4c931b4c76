"""``grad(u, X)[:, 0:1]`` for ``grad(u, t)`` where ``t = X[:, 0:1]`` was sliced from the
tensor the outputs were computed from: differentiate with respect to it, then slice.

A PINN takes ``t, x = X[:, 0:1], X[:, 1:2]`` and computes ``u = model(X)``: the slices are
new tensors autograd never saw on the way to ``u``, so ``torch.autograd.grad(u, t)``
fails ("The differentiated Tensor at index 0 appears to not have been used in the
graph"). The derivative with respect to ``X``, sliced the same way (basic indexing: a view
of the same entries), is the one asked for, and no value changes. The slice's
name is followed up the failing call's frames into a helper's parameters (``gradient(u,
t)`` calling ``torch.autograd.grad(y, x, ...)``), and every call of the function where
the slices are bound that differentiates with respect to a slice of the same tensor is
rewritten with it (``u_x`` and ``u_xx`` too). The forward is left as written, and the
derivatives are those of differentiating the whole and slicing, to the last bit. Next,
where the slices tile the tensor along one dimension and are bound before the one call
that runs on it, that call is given them instead (``model(torch.cat([t, x], dim=1))``:
the same values, though second derivatives taken through the ``cat`` may round
differently); then the failing call alone. Judged like a
cut (the original never got past the call): the backward calls complete, losses stay
finite, every tensor the program trains still gets its gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from autoclone.classify import UNUSED_INPUT
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, called_name, char_col
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.create_graph import is_grad_call
from autoclone.parsed import innermost, parsed

KIND_NAME = "grad_of_base"


@dataclass(frozen=True)
class _Slice:
    """Where a differentiated slice's name is bound: the function, its file, the name of
    the callee taking it (``torch.autograd.grad`` or a helper), and the argument's place."""

    file: str
    scope: ast.AST
    callee: str
    position: int


def _inputs(call: ast.Call) -> ast.expr | None:
    """``torch.autograd.grad``'s ``inputs``, given by position or by keyword."""
    if len(call.args) > 1:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg == "inputs"), None)


def _call_at(text: str, line: int, callee: str | None) -> ast.Call | None:
    """The one call on ``line`` of ``callee`` (None: a ``torch.autograd.grad`` call)."""
    tree = parsed(text)
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_callee(n, callee or "grad")
    ]
    mine = [c for c in calls if c.lineno <= line <= (c.end_lineno or c.lineno)]
    return mine[0] if len(mine) == 1 else None


def _follow(found: Diagnosis, texts: Mapping[str, str]) -> tuple[_Slice, str] | None:
    """The differentiated name, followed from the failing call out through the helpers'
    parameters to the function that binds it: where, and the name there."""
    callee: str | None = None
    position, method = 1, False
    for file, line in found.failing_frames:
        text = texts.get(file, "")
        call = _call_at(text, line, callee) if text else None
        if call is None:
            return None
        if callee is None:
            arg = _inputs(call)
        else:  # a method's ``self`` is not among the call's arguments
            position -= int(method and isinstance(call.func, ast.Attribute))
            arg = call.args[position] if len(call.args) > position else None
        if not isinstance(arg, ast.Name):
            return None
        scope = innermost(text, line, FUNCTIONS)
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        params = [a.arg for a in scope.args.args]
        if arg.id not in params:
            return _Slice(file, scope, callee or "grad", position), arg.id
        callee, position = scope.name, params.index(arg.id)
        method = params[0] in ("self", "cls")
    return None


@dataclass(frozen=True)
class _Bound:
    """A name bound to a slice of another: the base, the index as written, its node, and
    the line binding it."""

    base: str
    index: str
    node: ast.expr
    line: int


def _slices(scope: ast.AST, text: str) -> dict[str, _Bound]:
    """Names bound to a subscript of a name in ``scope``: ``t = X[:, 0:1]``, ``t, x =
    X[:, 0:1], X[:, 1:2]``."""
    out: dict[str, _Bound] = {}
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        pairs = (list(zip(target.elts, value.elts, strict=False))
                 if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                 else [(target, value)])  # fmt: skip
        for name, made in pairs:
            if isinstance(name, ast.Name) and isinstance(made, ast.Subscript) and \
                    isinstance(made.value, ast.Name) and _basic(made.slice):  # fmt: skip
                index = ast.get_source_segment(text, made.slice)
                if index:
                    out[name.id] = _Bound(made.value.id, index, made.slice, node.lineno)
    return out


def _basic(index: ast.expr) -> bool:
    """Basic indexing (slices, integers, ``...``, ``None``): a view of the same entries, so
    the derivative sliced is the slice's own; a list of indices may repeat a row."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Slice) or _constant(p) for p in parts)


def _constant(part: ast.expr) -> bool:
    """An integer (``-1`` too), ``...`` or ``None``."""
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
        part = part.operand
    return isinstance(part, ast.Constant) and (
        part.value is None or part.value is Ellipsis or type(part.value) is int
    )


def rewrites(found: Diagnosis, ctx: Context) -> tuple[Site | None, list[Site]]:
    """The slices fed to the forward in place of the tensor they tile, if they tile it;
    and one site per call of the binding function that differentiates with respect to a
    slice of the failing slice's base, the failing call's first."""
    if found.error_class != UNUSED_INPUT:
        return None, []
    try:
        followed = _follow(found, ctx.texts)
    except SyntaxError:
        return None, []
    if followed is None:
        return None, []
    where_, name = followed
    text = ctx.texts[where_.file]
    slices = _slices(where_.scope, text)
    if name not in slices:
        return None, []
    base = slices[name].base
    sites = []
    for call in ast.walk(where_.scope):
        if not (isinstance(call, ast.Call) and _is_callee(call, where_.callee)):
            continue
        arg = (
            _inputs(call)
            if where_.callee == "grad"
            else (call.args[where_.position] if len(call.args) > where_.position else None)
        )
        if isinstance(arg, ast.Name) and arg.id in slices and slices[arg.id].base == base:
            site = _site(where_.file, text, call, arg, base, slices[arg.id].index)
            if site is not None:
                sites.append((arg.id != name, call.lineno, site))
    mine = {n: b for n, b in slices.items() if b.base == base}
    fed = _fed(where_, text, base, mine) if sites else None
    return fed, [s for _, _, s in sorted(sites, key=lambda t: (t[0], t[1]))]


def _fed(where_: _Slice, text: str, base: str, mine: dict[str, _Bound]) -> Site | None:
    """``model(X)`` -> ``model(torch.cat([x, t], dim=1))``: where the slices tile ``X``
    along one dimension from its start, and are bound before the one call in the function
    that runs on ``X`` and binds its result, the slices are what the network runs on."""
    tiled = _tiling(mine)
    if tiled is None or "import torch" not in text:
        return None
    names, dim = tiled
    forwards = [
        (node, arg)
        for node in ast.walk(where_.scope)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and not _is_callee(node.value, "grad")
        for arg in node.value.args
        if isinstance(arg, ast.Name) and arg.id == base
    ]
    if len(forwards) != 1 or forwards[0][0].lineno <= max(b.line for b in mine.values()):
        return None
    _, arg = forwards[0]
    line = text.splitlines()[arg.lineno - 1]
    col = char_col(line, arg.col_offset)
    fed = f"torch.cat([{', '.join(names)}], dim={dim})"
    edit = TextEdit(arg.lineno, col, fed, delete=len(base))
    return Site(id=f"{where_.file}:{arg.lineno}:{col}:{KIND_NAME}:fed", file=where_.file,
                line=arg.lineno, col=col, kind="keyword", target=base,
                code=(line[:col] + fed + line[col + len(base):]).strip(),
                start=(arg.lineno, col), end=(arg.lineno, col + len(base)), depth=0,
                fix=KIND_NAME, rewrite=(edit,))  # fmt: skip


def _tiling(mine: dict[str, _Bound]) -> tuple[list[str], int] | None:
    """The slices' names in order and the dimension, where each takes ``a:b`` of one
    dimension and all of the others, and together they run from 0 without a gap."""
    spans = []
    for name, bound in mine.items():
        parts = bound.node.elts if isinstance(bound.node, ast.Tuple) else [bound.node]
        cut = [i for i, p in enumerate(parts) if not _full(p)]
        if len(cut) != 1 or not isinstance(parts[cut[0]], ast.Slice):
            return None
        part = parts[cut[0]]
        assert isinstance(part, ast.Slice)
        low, high = _int(part.lower, 0), _int(part.upper, None)
        if low is None or high is None or part.step is not None:
            return None
        spans.append((low, high, cut[0], len(parts), name))
    spans.sort()
    if len({(s[2], s[3]) for s in spans}) != 1 or spans[0][0] != 0 or any(
            a[1] != b[0] for a, b in zip(spans, spans[1:], strict=False)):  # fmt: skip
        return None
    return [s[4] for s in spans], spans[0][2]


def _full(part: ast.expr) -> bool:
    return isinstance(part, ast.Slice) and part.lower is None and part.upper is None \
        and part.step is None  # fmt: skip


def _int(node: ast.expr | None, default: int | None) -> int | None:
    if node is None:
        return default
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _is_callee(call: ast.Call, callee: str) -> bool:
    """``call`` is of ``callee`` (``"grad"``: a ``torch.autograd.grad`` call)."""
    return is_grad_call(call) if callee == "grad" else called_name(call.func) == callee


def _site(file: str, text: str, call: ast.Call, arg: ast.Name, base: str,
          index: str) -> Site | None:  # fmt: skip
    """``arg`` -> ``base`` in ``call``, and the slice after it (after ``[0]`` where the
    call is ``torch.autograd.grad(...)[0]``)."""
    lines = text.splitlines()
    whole: ast.expr = call
    parent = _subscript_of(parsed(text), call)
    if parent is not None:
        whole = parent
    elif is_grad_call(call):
        return None  # a tuple of derivatives: no one slice to take
    end_line, end = whole.end_lineno or whole.lineno, whole.end_col_offset or 0
    if arg.lineno != arg.end_lineno:
        return None
    col = char_col(lines[arg.lineno - 1], arg.col_offset)
    at = char_col(lines[end_line - 1], end)
    sliced = f"[{index}]"
    line = lines[arg.lineno - 1]
    code = (line[:col] + base + line[col + len(arg.id):at] + sliced + line[at:]).strip() \
        if whole.lineno == end_line == arg.lineno else line.strip()  # fmt: skip
    return Site(id=f"{file}:{call.lineno}:{col}:{KIND_NAME}", file=file, line=call.lineno,
                col=col, kind="keyword", target=arg.id, code=code,
                start=(arg.lineno, col), end=(end_line, at), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(arg.lineno, col, base, delete=len(arg.id)),
                         TextEdit(end_line, at, sliced)))  # fmt: skip


def _subscript_of(tree: ast.AST, call: ast.Call) -> ast.Subscript | None:
    """``call(...)[0]``: the subscript taking the first derivative of a grad call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and node.value is call and \
                isinstance(node.slice, ast.Constant) and node.slice.value == 0:  # fmt: skip
            return node
    return None


class GradOfBase(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return bool(rewrites(found, ctx)[1])

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        fed, sites = rewrites(found, ctx)
        together = [Candidate(-2.0, tuple(sites))] if len(sites) > 1 else []
        then = [Candidate(-1.0, (fed,))] if fed is not None else []
        return [*together, *then, Candidate(0.0, (sites[0],))] if sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.id.endswith(":fed"):
            return (
                f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the network "
                f"runs on the slices the derivatives are asked for, joined back into "
                f"`{site.target}` (the same values), so the graph goes through them."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code.strip()}`: "
            f"`{site.target}` is a slice taken from the tensor the outputs were computed "
            "from, a new tensor autograd never saw on the way to them; the derivative with "
            "respect to that tensor, sliced the same way, is the derivative with respect to "
            "the entries the slice holds, and no value changes."
        )


KIND = GradOfBase()
