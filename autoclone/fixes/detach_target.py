"""``.detach()`` where a value read by every pass of a loop is assigned: the old
log-probabilities of a PPO update computed once before the update epochs, a target
computed outside the inner loop, the previous epoch's logits kept as a soft target. The
first pass's backward frees the value's graph and the second pass runs into it. The
value is meant as a constant target, so it is detached where it is made, once.

Recognised from the tracer's carry edge (the graph the failing backward reached was
built before the previous backward call) when the carried name is read on the line that
consumed it and bound on the line that produced it (or rebound later in the loop, as in
``prev_logits = logits``). Judged like every detach: K steps with finite losses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.rewrites import as_detach
from autoclone.codemods.sites import ARG, ASSIGN, OPERAND, SUBSCRIPT, Site
from autoclone.diagnose import Diagnosis, Frame, crosses_iterations, where
from autoclone.fixes._ast import made_in_constructor
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.detach import loop_of, scope_of

_HEAD = re.compile(r"^[A-Za-z_][\w.]*")


def _read(frame: Frame, sites: Sequence[Site]) -> list[str]:
    """Names (or attributes) read on the loop's line that consumed the older graph, also
    where only a slice of them is read (``old_log_probs[mb]``)."""
    heads = (_HEAD.match(s.target) for s in sites if (s.file, s.line) == frame
             and s.kind in (ARG, OPERAND, SUBSCRIPT))  # fmt: skip
    return list(dict.fromkeys(m.group(0) for m in heads if m))


def _defines(site: Site, name: str) -> bool:
    """An assignment of ``name`` from a value that does not read ``name`` itself: a
    target, not a recurrent state (``h = rnn(x, h)`` is cut by the detach kind)."""
    binds = site.kind == ASSIGN and (site.assigned == name or name in site.bound)
    return binds and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", site.target) is None


def target_assignments(found: Diagnosis, sites: Sequence[Site], text: str) -> list[Site]:
    """Assignments of a name read where the older graph was consumed: on the producing
    line first, when that line is outside the loop that reads the value (computed once,
    maybe in a helper such as ``rollout()``), then later in the reading loop's own scope
    (``prev_logits = logits``)."""
    made = found.carry_producer
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    if made is None or not frames or made[0] != frames[-1][0]:
        return []
    outer = frames[-1]
    names = _read(outer, sites)
    defining = [s for s in sites if s.file == outer[0] and any(_defines(s, n) for n in names)]
    loop = loop_of(text, outer[1])
    at_made = [s for s in defining if s.line == made[1] and not loop[0] <= s.line <= loop[1]]
    scope = scope_of(text, outer[1])
    later = [s for s in defining if s.line > outer[1] and scope_of(text, s.line) == scope]
    return at_made + sorted(later, key=lambda s: -s.line)


class DetachTarget(Kind):
    name = "detach_target"
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and not made_in_constructor(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        text = ctx.texts.get(found.carry_producer[0], "") if found.carry_producer else ""
        edits = [as_detach(s) for s in target_assignments(found, ctx.sites, text)]
        outermost: dict[tuple[str, int], Site] = {}  # one edit per assignment
        for site in edits:
            if site is not None:
                outermost.setdefault((site.file, site.line), site)
        return [Candidate(-1.0 + i / 100, (s,)) for i, s in enumerate(outermost.values())]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        name = site.assigned or site.target
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: `{name}` is a "
            f"constant target: read again by a later pass of the loop at "
            f"{where(found.carry_consumer, lines)}, after the backward call at "
            f"{where(found.previous_backward or found.failing, lines)} had freed the graph it "
            "was computed with. Detached where it is assigned, every pass reads its value "
            "and no backward call reaches into that older graph."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.assigned or s.target}`" for s in chosen)
        return [
            f"this changes what is differentiated: no gradient flows through {names} any "
            "more (in the original only the first pass could have backpropagated through it, "
            "and the second pass crashed); a value used as a target, an old policy's "
            "log-probability or a teacher's output is meant to be a constant"
        ]


KIND = DetachTarget()
