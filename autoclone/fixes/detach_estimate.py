"""``.detach()`` where a policy gradient's estimate reads the critic: GAE computed over
values stacked with their graph, then normalised in place (a version error).

The advantage weighting ``log_prob(action)`` is a constant by the estimator's definition;
the return target the critic regresses on is one too. Both are made from the values the
rollout kept, and the maintainer's cure detaches those values where the estimate takes
them in (``values = torch.stack(self.values + [last_value]).detach()``), so the in-place
normalisation becomes legal and the critic trains through its own loss alone. Writing
the normalisation out of place removes the error and keeps the wrong gradient (refused by
``autoclone.score_weights``); detaching the advantage late leaves the return target
carrying the critic's graph.

The tracer finds the line (``autoclone.estimate``): of the lines that made the weight's
graph, the deepest whose cut leaves the weight reaching no parameter while the loss keeps
every parameter it reaches apart from the weight. Judged like every detach: the backward
calls complete with finite losses, nothing the original trained loses its gradient, and
no log-probability is weighted by a graph any more.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.codemods.rewrites import as_detach
from autoclone.codemods.sites import ASSIGN, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.fixes.detach import detach_at
from autoclone.parsed import parsed


def assignments(found: Diagnosis, ctx: Context) -> list[Site]:
    """The assignment statement on each cut line, deepest line first: the value bound
    there is what the estimate reads; or the value a ``return`` of one value gives back
    there (a GAIL reward, ``return -F.logsigmoid(-logits)``)."""
    out = []
    for file, line in found.estimate_cuts:
        here = [s for s in ctx.sites if s.file == file and s.kind == ASSIGN
                and s.start[0] <= line <= s.end[0]]  # fmt: skip
        detached = [s for s in (as_detach(s) for s in here) if s is not None][:1]
        text = ctx.texts.get(file, "")
        held = holding(parsed(text), line) if text and not detached else None
        stmt = held[1][held[2]] if held else None
        if isinstance(stmt, ast.Return) and stmt.value is not None and \
                not isinstance(stmt.value, ast.Tuple):  # fmt: skip
            detached = [detach_at(file, text, stmt.value, "returned")]
        out += detached
    return out


class DetachEstimate(Kind):
    name = "detach_estimate"
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        try:
            return bool(assignments(found, ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked([[s] for s in assignments(found, ctx)], start=-2.0)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        name = site.assigned or site.target
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: a policy "
            f"gradient's weight (an advantage, a return) is computed from `{name}`, which "
            "carries the graph of trained parameters (a critic's values). Detached where "
            "the estimate takes it in, the weight and every target made from it are "
            f"constants: the write at {where(found.mutation or found.failing, lines)} no "
            "longer changes a tensor a backward call needs, and the critic trains only "
            "through its own loss."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.assigned or s.target}`" for s in chosen)
        return [
            f"this changes what is differentiated: no gradient flows through {names} into "
            "the policy loss any more; in the original the policy loss would also have "
            "trained what the weight is computed from, which a score-function estimator "
            "takes as a constant"
        ]


KIND = DetachEstimate()
