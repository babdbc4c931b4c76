"""``@torch.inference_mode()`` / ``@torch.no_grad()`` removed from a function the training
step runs, where the loss has no graph at all.

Reference model code is often written for inference: Meta's LLaMA ``Transformer.forward``
carries ``@torch.inference_mode()``. Trained as it is, every output of the decorated
function is made with grad disabled, so the loss "does not require grad and does not have
a grad_fn". The decorator changes no value the function computes, only whether autograd
records it; the script's evaluation usually disables grad again itself. A decorated
``forward`` (or ``__call__``) is tried first, then other decorated functions; a function
whose name says it only evaluates (``evaluate``, ``generate``, ``predict``,
``validation_step``, ...) is where the decorator belongs and is never offered. Judged like
a cut (the original never completed a backward call): K steps with finite losses, and
every tensor the program trains gets a gradient, which a loss merely made to require grad
(``loss.requires_grad_()``) would not give.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.rewrites import line_dropped
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import EVALUATES
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked

KIND_NAME = "grad_decorator"
_MODES = ("no_grad", "inference_mode")
_FIRST = ("forward", "__call__")


def _disables_grad(node: ast.expr) -> bool:
    """``torch.no_grad()``, ``torch.inference_mode()`` (or ``(True)``), bare or imported."""
    call = node if isinstance(node, ast.Call) else None
    func = call.func if call is not None else node
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _MODES:
        return False
    if isinstance(func, ast.Attribute) and not (
        isinstance(func.value, ast.Name) and func.value.id == "torch"
    ):
        return False
    args = [*call.args, *(k.value for k in call.keywords)] if call is not None else []
    return all(isinstance(a, ast.Constant) and a.value is True for a in args)


def decorated(ctx: Context) -> list[Site]:
    """A site per grad-disabling decorator on its own line over a function that does not
    only evaluate, in every file of the project; those over ``forward`` first."""
    found: list[tuple[bool, Site]] = []
    for file, text in ctx.texts.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if EVALUATES.search(node.name):
                continue
            for deco in node.decorator_list:
                if deco.lineno != deco.end_lineno or not _disables_grad(deco):
                    continue
                line = deco.lineno
                code = ctx.line(file, line).strip()
                site = line_dropped(file, line, code, node.name, KIND_NAME)
                found.append((node.name not in _FIRST, site))
    return [site for _, site in sorted(found, key=lambda p: (p[0], p[1].file, p[1].line))]


class GradDecorator(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == NO_GRAPH and bool(decorated(ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked([[site] for site in decorated(ctx)])

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: remove `{site.code}` from "
            f"`{site.target}`: it disables autograd for everything `{site.target}` computes, "
            "so the training loss had no graph. The decorator changes no value, only whether "
            "autograd records it; evaluation that should not record disables grad itself."
        )


KIND = GradDecorator()
