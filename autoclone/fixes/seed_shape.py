"""``torch.ones_like(output)`` for a seed of ones built with another shape: the gradient a
backward call is given for each output must have that output's shape.

WGAN-GP's penalty takes ``autograd.grad(outputs=disc_interpolates, inputs=interpolates,
grad_outputs=torch.ones(real_data.size()))``: ones of the critic's *input* shape for its
``[64, 1]`` scores ("Mismatch in shape: grad_output[0] has a shape of torch.Size([64, 2])
and output[0] has a shape of torch.Size([64, 1])"). A seed of ones means "the sum of the
output's elements"; weighted task losses seeded with ``torch.ones(1) * w`` for 0-dim
losses mean "``w`` times the loss". Where a seed builds its ones with ``torch.ones(...)``
(or ``torch.ones_like`` of another tensor, ``x.new_ones(...)``) and the output it pairs
with is a name, that call becomes ``torch.ones_like(output)``:
every factor, device move and dtype the program wrote around it stays. Replacing the
seed by a reduction (``outputs=disc_interpolates.mean()``) would divide every gradient by
the batch size. Judged like a cut (the original completed no call past this one): K
steps with finite losses, every tensor an optimizer updates still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import SEED_SHAPE
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import char_col
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "seed_shape"
_GRAD = ("torch.autograd.grad", "autograd.grad")
_BACKWARD = ("torch.autograd.backward", "autograd.backward")


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    named = next((k.value for k in call.keywords if k.arg == keyword), None)
    if named is not None:
        return named
    return call.args[index] if len(call.args) > index else None


def pairs(call: ast.Call) -> list[tuple[ast.expr, ast.expr]]:
    """(output, seed) of a backward call: ``autograd.grad``'s ``outputs`` and
    ``grad_outputs``, ``autograd.backward``'s ``tensors`` and ``grad_tensors``, a
    ``x.backward(gradient)``'s receiver and gradient; element by element for lists."""
    name = ast.unparse(call.func)
    if name in _GRAD:
        outputs, seeds = _argument(call, 0, "outputs"), _argument(call, 2, "grad_outputs")
    elif name in _BACKWARD:
        outputs, seeds = _argument(call, 0, "tensors"), _argument(call, 1, "grad_tensors")
    elif isinstance(call.func, ast.Attribute) and call.func.attr == "backward":
        outputs, seeds = call.func.value, _argument(call, 0, "gradient")
    else:
        return []
    if outputs is None or seeds is None:
        return []
    if isinstance(outputs, ast.List | ast.Tuple) and isinstance(seeds, ast.List | ast.Tuple):
        if len(outputs.elts) != len(seeds.elts):
            return []
        return list(zip(outputs.elts, seeds.elts, strict=True))
    return [(outputs, seeds)]


def _ones(seed: ast.expr) -> ast.Call | None:
    """The one call a seed builds its ones with: ``torch.ones(...)``,
    ``torch.ones_like(x)`` of another tensor (the critic's input rather than its scores),
    ``x.new_ones(...)``."""
    calls = [n for n in ast.walk(seed) if isinstance(n, ast.Call) and (
        ast.unparse(n.func) in ("torch.ones", "torch.ones_like")
        or isinstance(n.func, ast.Attribute) and n.func.attr == "new_ones")]  # fmt: skip
    return calls[0] if len(calls) == 1 else None


def site(found: Diagnosis, ctx: Context) -> Site | None:
    """Every ``torch.ones(...)`` of the failing call's seeds made ``torch.ones_like`` of
    the output it pairs with, where that output is a name (or ``self.name``)."""
    if found.failing is None:
        return None
    file, line = found.failing
    text = ctx.texts.get(file, "")
    nodes = ast.walk(parsed(text)) if text else ()
    calls = [n for n in nodes if isinstance(n, ast.Call)
             and n.lineno <= line <= (n.end_lineno or n.lineno) and pairs(n)]  # fmt: skip
    if not calls:
        return None
    call = min(calls, key=lambda c: (c.end_lineno or c.lineno) - c.lineno)
    edits, codes = [], []
    for output, seed in pairs(call):
        ones = _ones(seed)
        if ones is None or not isinstance(output, ast.Name | ast.Attribute):
            continue
        if ones.lineno != ones.end_lineno:
            return None
        new = f"torch.ones_like({ast.unparse(output)})"
        line_text = text.splitlines()[ones.lineno - 1]
        col = char_col(line_text, ones.col_offset)
        end = char_col(line_text, ones.end_col_offset or 0)
        edits.append(TextEdit(ones.lineno, col, new, delete=end - col))
        codes.append(new)
    if not edits:
        return None
    first = edits[0]
    return Site(id=f"{file}:{call.lineno}:{call.col_offset}:{KIND_NAME}", file=file,
                line=first.line, col=first.col, kind="keyword", target=ast.unparse(call.func),
                code=", ".join(codes), start=(first.line, first.col), end=(first.line, first.col),
                depth=0, fix=KIND_NAME, rewrite=tuple(edits))  # fmt: skip


class SeedShape(Kind):
    name = KIND_NAME
    classes = (SEED_SHAPE,)
    reference = NONE
    keeps_prefix = True

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return [s for s in (site(found, ctx),) if s is not None]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the seed of "
            f"`{site.target}` must have the shape of the output it is given for; ones of that "
            "output's shape (and everything the program wrote around them: a weight, a "
            "device) give the gradient the seed meant, the sum of the output's elements."
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "Give each output a gradient of its own shape (torch.ones_like(output) for a "
            "sum); reducing the output instead (output.mean()) scales every gradient"
        )


KIND = SeedShape()
