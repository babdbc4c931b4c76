"""``@once_differentiable`` removed from a custom Function's ``backward`` made of torch
code, where a penalty differentiates it again.

The decorator runs ``backward`` without recording a graph and makes any attempt to
differentiate its result fail ("trying to differentiate twice a function that was marked
with @once_differentiable"): right for a backward that calls a custom kernel or leaves
torch, and only a restriction for one made of torch operations on ``grad_output`` and the
saved tensors (a fused activation's CPU fallback under an R1 penalty's
``create_graph=True``). Without it autograd records the backward like any other code, and
its derivative is the derivative of what the author wrote. Offered only where every call
in ``backward`` is torch's, a tensor method or a Python builtin, and nothing leaves
autograd (``.data``, ``.detach()``, ``.numpy()``, ``.item()``, ``no_grad``, a kernel
under ``torch.ops`` or ``torch._C``). Judged like a cut: K steps with finite losses,
every tensor still trained.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping

from autoclone.classify import ONCE_DIFFERENTIABLE
from autoclone.codemods.rewrites import line_dropped
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis
from autoclone.fixes._ast import FUNCTIONS, called_name, stored
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "once_differentiable_dropped"
_LEAVES = {"data", "detach", "detach_", "numpy", "item", "tolist", "no_grad", "inference_mode",
           "ops", "_C", "cpu_numpy"}  # fmt: skip
_TORCH = {"torch", "F", "nn", "math"}


def _marks(deco: ast.expr) -> bool:
    return called_name(deco) == "once_differentiable"


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _plain_torch(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every call is torch's, a method of a local tensor or a builtin; nothing leaves
    autograd."""
    local = {a.arg for a in fn.args.args} | stored(fn)
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and node.attr in _LEAVES:
            return False
        if isinstance(node, ast.Call):
            root = _root(node.func)
            name = root.id if isinstance(root, ast.Name) else ""
            if name not in local and name not in _TORCH and not hasattr(builtins, name):
                return False
    return True


def sites(ctx: Context) -> list[Site]:
    """The decorator line of each such ``backward`` in the project."""
    out = []
    for file, text in sorted(ctx.texts.items()):
        for fn in ast.walk(parsed(text)):
            if not isinstance(fn, FUNCTIONS) or fn.name != "backward":
                continue
            for deco in fn.decorator_list:
                if _marks(deco) and deco.lineno == deco.end_lineno and _plain_torch(fn):
                    code = ast.get_source_segment(text, deco) or "once_differentiable"
                    out.append(line_dropped(file, deco.lineno, f"@{code}", fn.name, KIND_NAME))
    return out


class OnceDifferentiableDropped(Kind):
    name = KIND_NAME
    classes = (ONCE_DIFFERENTIABLE,)
    reference = NONE

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        found_sites = sites(ctx)
        return [Candidate(0.0, tuple(found_sites))] if found_sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` removed at {site.file}:{site.line}: the backward is torch "
            "operations on its inputs, so autograd can record it, and the penalty that "
            "differentiates the gradient again (create_graph=True) gets the derivative of "
            "what the backward computes."
        )


KIND = OnceDifferentiableDropped()
