"""A tensor made before an optimizer's step detached where a later loss reads it, if its
gradient into the stepped weights was unused (an auxiliary head on an encoder's features).

``opt.step()`` writes the encoder's weights in place, and a loss made afterwards from
features computed before it runs into their old versions in backward (a version error).
Where that loss's optimizer holds only its own head and every gradient is zeroed before
the next step, the gradient the loss would have put into the encoder is thrown away: the
program's numbers are those of the same loss with the features detached. Judged against
the numbers the program computes with every saved tensor kept
(``allow_mutation_on_saved_tensors``), as a cut: every loss and every gradient of the
optimizers the call still reaches must come out the same, so a detach that drops a
gradient some optimizer does step on is rejected. Moving the step instead would give the
encoder the auxiliary gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.rewrites import as_detach
from autoclone.codemods.sites import ARG, OPERAND, Site
from autoclone.diagnose import Diagnosis
from autoclone.fixes._ast import FUNCTIONS, grad_off_lines, stored
from autoclone.fixes.base import SAME_NUMBERS, Candidate, Context, Kind, cut_loses
from autoclone.oracle import Reference, judge
from autoclone.outcomes import Failed, Outcome, Passed
from autoclone.parsed import innermost
from autoclone.trial import RunResult

KIND_NAME = "detach_discarded"


def _made_before(fn: ast.AST, line: int) -> set[str]:
    """Names the function binds (or takes) above ``line``."""
    args = {a.arg for a in fn.args.args} if isinstance(fn, FUNCTIONS) else set()
    return (args | stored(fn, above=line)) - {"self"}


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """Detaches of the reads, between the step and the failing backward call in the step's
    function, of names made before the step (an argument, or an operand: Meta Pseudo
    Labels' ``s_loss_l_new - s_loss_l_old``); none under ``no_grad``, where it changes
    nothing."""
    step, failing = found.mutation, found.failing
    if not (found.optimizer_step and step and failing and step[0] == failing[0]):
        return []
    text = ctx.texts.get(step[0], "")
    fn = innermost(text, step[1], FUNCTIONS) if text else None
    if fn is None or innermost(text, failing[1], FUNCTIONS) is not fn:
        return []
    before, off = _made_before(fn, step[1]), grad_off_lines(fn)
    reads = [s for s in ctx.sites if s.file == step[0] and step[1] < s.line <= failing[1]
             and s.kind in (ARG, OPERAND) and s.target in before and s.line not in off]
    return [d for d in map(as_detach, reads) if d is not None]


class DetachDiscarded(Kind):
    name = KIND_NAME
    classes = (INPLACE_VERSION,)
    reference = SAME_NUMBERS

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(i + 0.5, (s,)) for i, s in enumerate(sites(found, ctx))]

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        """The reference's numbers, as a cut: a call may stop reaching an optimizer's
        parameters only where every optimizer it still reaches gets the same gradients,
        and never those of the optimizer that steps right after it."""
        outcome = judge(run, reference, cut=True)
        stale = cut_loses(run, ctx, untouched=False) if isinstance(outcome, Passed) else ""
        return Failed("numbers", stale) if stale else outcome

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` at {site.file}:{site.line}: `{site.target}` was made before "
            "the optimizer step, which changed in place the weights its graph saved; the "
            "gradient this loss put into them was never stepped on (zeroed first), so "
            "detaching it keeps every number, checked against the run that keeps the saved "
            "weights."
        )


KIND = DetachDiscarded()
