"""A backward call moved into the ``with`` block just above it, whose exit wrote in place
what the block's forward pass saved.

Adversarial weight perturbation as a context manager: ``with awp.perturbed():`` saves the
weights, pushes them along the gradient, yields, and restores them in its ``finally``
(``p.copy_(backup)``). The loss is computed inside the block and ``adv_loss.backward()``
right after it, so the restore has already written the weights the forward saved. The
same shape swaps in EMA weights for a loss (``with ema.average_parameters():``). The
program means the gradient at the point the loss was computed: the backward call as the
block's last statement runs before the exit's write, and computes exactly the numbers of
the run that keeps every saved tensor as it was when saved
(``allow_mutation_on_saved_tensors``), which judge it. Writing the restore through
``.data`` instead would mix perturbed activations with restored weights in the chain rule.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.rewrites import statement_moved
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import holding
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "backward_in_block"


def _spans(node: ast.stmt, line: int) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def moved(found: Diagnosis, ctx: Context) -> Site | None:
    """The failing backward statement written again as the last statement of the ``with``
    block right above it, where the block's forward saved the tensor and its exit (the
    ``with`` line, or a line of it on the write's stack) wrote it; else None."""
    failing = found.failing
    if found.error_class != INPLACE_VERSION or failing is None:
        return None
    file, line = failing
    held = holding(parsed(ctx.texts.get(file, "")), line)
    if held is None or held[2] == 0:
        return None
    _, block, index = held
    statement, above = block[index], block[index - 1]
    if not isinstance(above, ast.With | ast.AsyncWith) or not isinstance(statement, ast.Expr):
        return None
    if statement.lineno != statement.end_lineno or ".backward(" not in ast.unparse(statement):
        return None
    saved_inside = any(f == file and any(_spans(s, n) for s in above.body)
                       for f, n in (*found.saved_frames, *(filter(None, [found.saved]))))
    exited = any(f == file and (n == above.lineno or _spans(above, n)) and
                 not any(_spans(s, n) for s in above.body) for f, n in found.mutation_frames)
    if not (saved_inside and exited):
        return None
    indent = " " * above.body[-1].col_offset
    return statement_moved(file, line, ctx.line(file, line).strip(), line, indent, KIND_NAME)


class BackwardInBlock(Kind):
    name = KIND_NAME
    classes = (INPLACE_VERSION,)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        site = moved(found, ctx)
        return [site] if site is not None else []

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-1.0, (s,)) for s in self.edits(found, ctx)]  # before any clone

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` moved into the `with` block above it: the block's exit wrote "
            f"in place (at {where(found.mutation, lines)}) what its forward pass had saved "
            "for backward; as the block's last statement, the backward call runs before the "
            "exit, and takes the gradient at the values the loss was computed with."
        )


KIND = BackwardInBlock()
