"""``detach_()`` on a view, made out of place: a truncated-BPTT trainer that repackages a
hidden state stacked as one tensor with ``for s in self.state: s.detach_()`` gets
``self.state = self.state.detach()``. Likewise ``target.requires_grad = False`` (or
``requires_grad_(False)``) on a computed tensor, which autograd refuses ("you can only
change requires_grad flags of leaf variables"), gets ``target = target.detach()``: what
the flag was meant to do, in the one form a non-leaf allows. ``x.requires_grad = True`` on
a computed tensor (WGAN-GP's interpolates made from a fake sample not detached) gets
``x = x.detach().requires_grad_()``, the fresh input to differentiate with respect to that
the flag asks for; then, where that leaves a trained tensor without a gradient, the flag
made redundant (``x.requires_grad_()``, which a non-leaf allows).

Autograd refuses to detach a view in place ("Can't detach views in-place. Use detach()
instead"): the rows of a stacked ``(h, c)`` are views of it. The program meant to cut the
graph at the window's border and keep the values; the out-of-place detach does exactly
that to the tensor the loop walked (or, where it walked a list, to each of its tensors, as
a new list). Rewriting the loop's statement alone (``s = s.detach()``) would only rebind
the loop's name and cut nothing.

Judged like every detach (what is differentiated changes on purpose, so there are no
reference numbers): the backward calls the original completed come out the same, losses
stay finite, and every tensor the original differentiated still gets a gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import DETACH_VIEW, NONLEAF_REQUIRES_GRAD
from autoclone.codemods.rewrites import statement_replaced
from autoclone.codemods.sites import DETACH, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import requires_grad_flag
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.parsed import innermost

KIND_NAME = "detach_out_of_place"
_CLASSES = (DETACH_VIEW, NONLEAF_REQUIRES_GRAD)


def _detached_call(stmt: ast.stmt) -> tuple[ast.expr, bool] | None:
    """``(x, leaf)`` of a statement that means "``x``, cut from its graph" (``x.detach_()``,
    ``x.requires_grad_(False)``, ``x.requires_grad = False``: leaf False) or "``x``, an
    input to differentiate with respect to" (``x.requires_grad = True``: leaf True)."""
    flag = requires_grad_flag(stmt)
    if flag is not None:
        return flag
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr == "detach_" and not call.args and not call.keywords:
        return call.func.value, False
    return None


def rewrites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The loop that detaches each tensor it walks, as the container detached (a tensor,
    then a list); or ``x = x.detach()`` for the statement alone."""
    if found.failing is None:
        return []
    file, line = found.failing
    text = ctx.texts.get(file, "")
    stmt = innermost(text, line, (ast.Expr, ast.Assign)) if text else None
    found_call = _detached_call(stmt) if isinstance(stmt, ast.stmt) else None
    if found_call is None or not isinstance(found_call[0], ast.Name | ast.Attribute):
        return []
    name = ast.unparse(found_call[0])
    if found_call[1]:  # a fresh leaf; else the flag was redundant (the graph kept)
        return [_replace(file, stmt, f"{name} = {name}.detach().requires_grad_()"),  # type: ignore[arg-type]
                _replace(file, stmt, f"{name}.requires_grad_()")]  # type: ignore[arg-type]
    loop = innermost(text, line, (ast.For,))
    if isinstance(loop, ast.For) and loop.body == [stmt] and ast.unparse(loop.target) == name:
        if not isinstance(loop.iter, ast.Name | ast.Attribute):
            return []
        walked = ast.unparse(loop.iter)
        return [_replace(file, loop, f"{walked} = {walked}.detach()"),
                _replace(file, loop, f"{walked} = [{name}.detach() for {name} in {walked}]")]
    return [_replace(file, stmt, f"{name} = {name}.detach()")]  # type: ignore[arg-type]


def _replace(file: str, node: ast.stmt, code: str) -> Site:
    return statement_replaced(file, node, code, DETACH, f"{KIND_NAME}:{code}", code)


class DetachOutOfPlace(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class in _CLASSES and bool(rewrites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked([[site] for site in rewrites(found, ctx)])

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        at = f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: "
        if found.error_class == NONLEAF_REQUIRES_GRAD and site.code.endswith("requires_grad_()"):
            return at + (
                "`requires_grad` can be set only on a leaf, and this tensor was computed "
                "(it requires grad already, through its graph). "
                + ("Its detached copy, made to require grad, is the fresh input the flag "
                   "asks for: a later gradient with respect to it is taken there, and none "
                   "flows on into what it was computed from."
                   if "detach()" in site.code else
                   "The flag was redundant: the tensor keeps its graph, and a gradient "
                   "with respect to it flows on into what it was computed from.")
            )
        if found.error_class == NONLEAF_REQUIRES_GRAD:
            return at + (
                "`requires_grad` can be switched off only on a leaf, and this tensor was "
                "computed; its detached copy has the same values and no graph, which is what "
                "switching it off was meant to give: no gradient flows back through it."
            )
        return at + (
            "`detach_()` was called on a view, which autograd cannot detach in place; "
            "detached out of place, the values are kept and the graph is cut where the "
            "program meant to cut it."
        )


KIND = DetachOutOfPlace()
