"""``with torch.no_grad():`` around a module's tensor edited in place outside ``forward``,
whose graph a later backward call meets.

LoRA's merge in ``train()``/``eval()`` (``self.base.weight.add_(self.delta_weight())`` when
the model is put in eval mode, ``sub_`` when it is put back) edits the weight with a value
that has a graph.

The edit changes the weight; it is not part of any loss. Recorded by autograd, it makes the
frozen weight a node of the graph it was computed from, carried from one step into the
next, so the second backward call meets a freed graph. Under ``no_grad`` the weight takes
the same values and keeps no graph. Every in-place write into the same tensor in that
function and the other methods of its class runs under ``no_grad`` (a merge and its
unmerge). A write inside
``forward`` (a running statistic updated in place) is left to the detach kinds: there the
current step may mean to differentiate through it. Judged as a cut (the graph the original
carried is gone on purpose): K steps with finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import BACKWARD_TWICE
from autoclone.codemods.rewrites import as_no_grad
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, innermost
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.no_grad import method_write

KIND_NAME = "no_grad_weight_edit"
_FORWARD = ("forward", "__call__")


def _receiver(stmt: ast.stmt) -> str:
    """``self.base.weight`` of ``self.base.weight.add_(...)``: an in-place method called on
    an attribute of an object, as a statement of its own; "" otherwise."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return ""
    op, held = call.func.attr, call.func.value
    if not op.endswith("_") or op.startswith("_") or not isinstance(held, ast.Attribute):
        return ""
    return ast.unparse(held)


def edits(found: Diagnosis, ctx: Context) -> list[Site]:
    """Each in-place write into the tensor the carried graph was made by, in the function
    (not a ``forward``) that made it and the other methods of its class (a ``merge`` and
    its ``unmerge``), under ``no_grad``."""
    if found.carry_producer is None:
        return []
    file, line = found.carry_producer
    text = ctx.texts.get(file, "")
    stmt = innermost(text, line, (ast.Expr,)) if text else None
    held = _receiver(stmt) if isinstance(stmt, ast.Expr) else ""
    function = innermost(text, line, FUNCTIONS) if held else None
    if not isinstance(function, FUNCTIONS) or function.name in _FORWARD:
        return []
    owner = innermost(text, line, (ast.ClassDef,))
    functions = [f for f in ast.walk(owner) if isinstance(f, FUNCTIONS)] if owner else [function]
    writes = sorted({n.lineno for f in functions if f.name not in _FORWARD for n in ast.walk(f)
                     if isinstance(n, ast.Expr) and _receiver(n) == held})  # fmt: skip
    sites = [method_write(file, n, ctx.line(file, n)) for n in writes]
    wrapped = [w for s in sites if s is not None and (w := as_no_grad(s, text)) is not None]
    return wrapped if len(wrapped) == len(writes) else []  # every write, or none


class NoGradWeightEdit(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == BACKWARD_TWICE and bool(edits(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = edits(found, ctx)
        return [Candidate(0.0, tuple(sites))] if sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `with torch.no_grad():` around "
            "this in-place edit of a module's tensor: the edit changes the weight and is no "
            "part of any loss, but autograd recorded it, so the weight carried the graph of "
            "the tensors it was computed from into the next step, whose backward call met "
            "that freed graph. Under no_grad the weight takes the same values and no graph."
        )


KIND = NoGradWeightEdit()
