"""An optimizer step moved below the last statement that still differentiates the graph
it would change: GradNorm's ``self.opt.step()`` right after ``weighted.backward(
retain_graph=True)``, before the ``torch.autograd.grad`` calls that take each task's
gradient norm from that same graph.

The step writes the weights in place that the graph saved, so the later differentiation
meets them at a newer version. Where the later statements only differentiate what was
computed before the step (no new forward pass reads the weights), running the step after
them computes what the program means: the numbers of the run that keeps every saved tensor
as it was when saved (``allow_mutation_on_saved_tensors``), which judge it. A GAN, whose
second loss reads the stepped network again, is the optimizer-step kind's (a forward pass
repeated after the step): this kind is offered only where that one has no placement.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.codemods.rewrites import statement_moved
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, optimizer_before_backward, where
from autoclone.fixes._ast import step_block
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.fixes.optimizer_step import refreshed

KIND_NAME = "step_later"
_DIFFERENTIATES = re.compile(r"\.backward\(|autograd\.grad\(")


def moved(found: Diagnosis, ctx: Context) -> Site | None:
    """The step's statement dropped, and written again after the last statement of its
    block, from the failing one on, that differentiates; None where they do not share a
    block or the step is not a statement of one line."""
    shared = step_block(found, ctx.texts)
    if shared is None or shared[4] <= shared[3]:
        return None
    file, _, block, at, failing = shared
    statement = block[at]
    if statement.lineno != statement.end_lineno or not isinstance(statement, ast.Expr):
        return None
    last = max(i for i in range(failing, len(block))
               if i == failing or _DIFFERENTIATES.search(ast.unparse(block[i])))  # fmt: skip
    after = (block[last].end_lineno or block[last].lineno) + 1
    code = ctx.line(file, statement.lineno).strip()
    return statement_moved(file, statement.lineno, code, after, " " * statement.col_offset,
                           KIND_NAME)  # fmt: skip


class StepLater(Kind):
    name = KIND_NAME

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if not optimizer_before_backward(found):
            return False
        try:
            return not refreshed(found, ctx) and moved(found, ctx) is not None
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = moved(found, ctx)
        return [Candidate(0.0, (site,))] if site is not None else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` moved from {where(found.mutation, lines)} to just before "
            f"{where((site.file, site.line), lines)}: the step changed, in place, weights that "
            f"the graph differentiated at {where(found.failing, lines)} had saved. After the "
            "last statement that differentiates that graph, the step uses the same gradients "
            "and the graph is differentiated at the weights it was built with."
        )


KIND = StepLater()
