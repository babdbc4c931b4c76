"""``D(fake.detach())``: the GAN's forgotten detach. Two losses share a subgraph (the
generator's output feeds the discriminator's loss and the generator's loss; a critic's
``advantage`` feeds the actor's loss and the critic's); the first backward call frees it.
``retain_graph=True`` would remove the crash, but the retained run shows the first call's
gradients reaching parameters of another optimizer, which steps on them with no
``zero_grad`` in between: the generator would train on both losses. The cure is to detach
the shared tensor where the first loss reads it: the value the older graph made (the
tracer's carry edge), else the first loss's own read of it as the tracer saw it (one
trainer line making both backward calls), else a name both loss expressions read.

Judged against the retained-graph run: every loss up to and including the first one past
the original crash must be the same (the detach changes no forward value, and the first
optimizer's gradients are those of its own loss either way), then K steps with finite
losses (the later optimizer now steps on its own loss alone, so the numbers part ways).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.rewrites import as_detach
from autoclone.codemods.sites import ARG, ASSIGN, OPERAND, Site
from autoclone.diagnose import Diagnosis, Frame, where
from autoclone.fixes._ast import FUNCTIONS, LOOPS
from autoclone.fixes.base import RETAINED, Candidate, Context, Kind, cut_loses
from autoclone.fixes.retain_graph import two_calls_one_graph
from autoclone.oracle import FINITE, Reference, judge, same
from autoclone.outcomes import Failed, Outcome, Passed
from autoclone.parsed import innermost
from autoclone.trial import RunResult


def shared_reads(found: Diagnosis, sites: Sequence[Site]) -> list[Site]:
    """Reads of the shared tensor (bound where the older graph was made) between that
    line and the first backward call: where the first loss takes it in. Where the value
    is made in a function the loop calls and the backward call is made in another
    (``action = agent.act(obs)``, ``buffer.push(obs, action)``, ``agent.update(...)``), the
    two stacks part in the loop: its own lines pair up, then the innermost ones."""
    made_at = found.producer_frames or ((found.carry_producer,) if found.carry_producer else ())
    first_at = found.previous_backward_frames or (
        (found.previous_backward,) if found.previous_backward else ())  # fmt: skip
    for made, first in _pairs(made_at, first_at):
        if made[0] != first[0] or made[1] >= first[1]:
            continue
        names = {n for s in sites if (s.file, s.line) == made and s.kind == ASSIGN
                 for n in s.bound}  # fmt: skip
        reads = [s for s in sites if s.file == made[0] and made[1] < s.line <= first[1]
                 and s.kind == ARG and s.target in names]  # fmt: skip
        if reads:
            return reads
    return []


def _pairs(made_at: Sequence[Frame], first_at: Sequence[Frame]) -> list[tuple[Frame, Frame]]:
    """The frames where the two stacks (innermost first) part, below the callers they
    share, then the innermost two: never an outer caller paired with another function's
    line (``fit()``'s call of ``update`` with ``main()``'s call of ``fit``)."""
    if not made_at or not first_at:
        return []
    made, first = list(made_at), list(first_at)
    while len(made) > 1 and len(first) > 1 and made[-1] == first[-1]:
        made.pop()
        first.pop()
    return list(dict.fromkeys([(made[-1], first[-1]), (made_at[0], first_at[0])]))


def first_reads(found: Diagnosis, sites: Sequence[Site]) -> list[Site]:
    """Where the first loss read the shared value on a line of its own (both backward
    calls made by one line of a trainer): the reads there of a name that one of the lines
    making the value bound (``self.fake = self(z)``, read by ``D(self.fake)``); then the
    failing loss's own read of it (a generator's step first: the discriminator's loss,
    second, is the one that must not reach the generator), as an argument or an operand
    (SAC's temperature loss, ``log_alpha * (logp + target_entropy)``)."""
    making = set(found.producer_frames)
    names = {n for s in sites if (s.file, s.line) in making and s.kind == ASSIGN for n in s.bound}
    reads = [(found.first_read, (ARG,)), (found.again_read, (ARG, OPERAND))]
    return [s for at, kinds in reads if at is not None
            for s in sites if (s.file, s.line) == at and s.kind in kinds
            and s.target in names]  # fmt: skip


_BACKWARD = re.compile(r"^\s*(?P<loss>[A-Za-z_]\w*)\.backward\(")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _loss_line(call: Frame | None, sites: Sequence[Site], ctx: Context) -> Frame | None:
    """Where the loss a backward call (``loss.backward()``) was last assigned before it."""
    if call is None:
        return None
    match = _BACKWARD.match(ctx.line(*call))
    if match is None:
        return None
    lines = [s.line for s in sites if s.file == call[0] and s.kind == ASSIGN
             and match["loss"] in s.bound and s.line < call[1]]  # fmt: skip
    return (call[0], max(lines)) if lines else None


def _reads(line: Frame, sites: Sequence[Site]) -> list[Site]:
    return [s for s in sites if (s.file, s.line) == line and s.kind in (ARG, OPERAND)
            and _NAME.match(s.target)]  # fmt: skip


def common_reads(found: Diagnosis, ctx: Context) -> list[Site]:
    """Two losses of one iteration (``actor_loss`` and ``critic_loss``, both built from
    ``advantage``): the names both loss expressions read, where the first one reads them.
    Detaching there keeps the first loss out of the graph the second one needs."""
    first = _loss_line(found.previous_backward, ctx.sites, ctx)
    second = _loss_line(found.failing, ctx.sites, ctx)
    if first is None or second is None or first == second:
        return []
    theirs = set(re.findall(r"[A-Za-z_]\w*", ctx.line(*second).split("=", 1)[-1]))
    return [s for s in _reads(first, ctx.sites) if s.target in theirs]


def made_before_first(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str]
) -> list[Site]:
    """The failing loss's reads (``value_loss(critic, states[:-1], returns)``) of names the
    first loss's pass made before its backward call: Dreamer's critic regressing the
    imagined returns on the imagined states, both of them made by the imagination graph
    the actor's backward call freed. Cut one and the other still leads into that graph;
    the tracer names one edge, so the others are found here, by where they were made: in
    the pass of the first backward call (its loop's body, or its function), before it."""
    again, first = found.again_read, found.previous_backward
    if again is None or first is None or again[0] != first[0] or again[1] <= first[1]:
        return []
    text = texts.get(first[0], "")
    scope = innermost(text, first[1], (*LOOPS, *FUNCTIONS)) if text else None
    if scope is None:
        return []
    begins = int(getattr(scope, "lineno", 0))  # the pass: its loop's body, or its function's
    bound = {n for s in sites if s.file == first[0] and s.kind == ASSIGN
             and begins < s.line < first[1] for n in s.bound}  # fmt: skip
    reads = [(s, _ROOT.match(s.target)) for s in sites if (s.file, s.line) == again
             and s.kind == ARG]  # fmt: skip
    return [s for s, root in reads if root is not None and root[0] in bound]


_ROOT = re.compile(r"^[A-Za-z_]\w*(?=$|\[)")


def _detached(reads: Sequence[Site]) -> list[Site]:
    return [e for e in map(as_detach, reads) if e is not None]


def _first(frames: Sequence[Sequence[object]]) -> tuple[str, int] | None:
    return (str(frames[0][0]), int(str(frames[0][1]))) if frames else None


class DetachShared(Kind):
    name = "detach_shared"
    reference = RETAINED

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return two_calls_one_graph(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        if not ctx.evidence.get("leaks") and not ctx.evidence.get("retained_failed"):
            return []
        carried = shared_reads(found, ctx.sites)
        first = carried or first_reads(found, ctx.sites) or common_reads(found, ctx)
        # then the failing loss's own read, where the two reads part (the second loss is
        # the one that must stay out of the graph when the first one needs it)
        later = [s for s in first_reads(found, ctx.sites) if s not in first]
        cuts, mine = _detached(first), _detached(later)
        # every read of the tensor the older graph made; never several names at once: a
        # single detach passes only if it alone keeps the first loss out of that graph
        every = _detached(carried)
        together = [Candidate(-1.0, tuple(every))] if len(every) > 1 else []
        made = _detached(made_before_first(found, ctx.sites, ctx.texts))
        last = [Candidate(len(cuts) + len(mine), tuple(made))] if len(made) > 1 else []
        if found.carry_stepped:  # the first loss trained what made the value, and its
            # optimizer stepped on it: the later loss's own read goes first
            return [Candidate(i - len(mine) - 1.0, (s,)) for i, s in enumerate(mine)] + \
                together + [Candidate(i, (s,)) for i, s in enumerate(cuts)] + last
        return together + [Candidate(i, (s,)) for i, s in enumerate([*cuts, *mine])] + last

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        leaks = ctx.evidence.get("leaks") or []
        if not leaks:
            return ""
        return (
            f"retain_graph=True at {where(found.previous_backward, ctx.lines)} would leak that "
            "backward call's gradients into parameters of another optimizer, which steps on "
            f"them at {where(_first(leaks[0]['step_frames']), ctx.lines)} without zero_grad() "
            "in between; "
            "no read of a shared tensor to detach was found. Detach the tensor both losses "
            "share where the first loss reads it (for a GAN: `D(fake.detach())`), or call "
            "that optimizer's zero_grad() after the first backward call"
        )

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        outcome = judge(run, Reference(FINITE, (), (), reference.steps))
        if not isinstance(outcome, Passed):
            return outcome
        # without the retained run's numbers it is judged as a cut
        stale = cut_loses(run, ctx, untouched=bool(ctx.evidence.get("retained_failed")))
        if stale:
            return Failed("numbers", stale)
        upto = int(ctx.evidence.get("before", 0)) + 1
        for index, (mine, ref) in enumerate(zip(run.losses[:upto], reference.losses[:upto],
                                                strict=False)):  # fmt: skip
            if not same(mine, ref):
                return Failed("numbers", f"loss at backward call {index + 1} is {mine}, the "
                              f"run with every graph retained has {ref}")  # fmt: skip
        return Passed()

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        leak = found.freed_by or found.previous_backward
        if (site.file, site.line) == found.again_read:  # the later loss's own read
            return (
                f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: this loss no "
                f"longer reaches into the graph that made `{site.target}`, which the backward "
                f"call at {where(leak, lines)} had already freed; it trains only the rest of "
                "what it reads, and every optimizer stepping after it still gets a gradient "
                "(checked)."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the loss "
            f"backpropagated at {where(leak, lines)} no longer reaches into the graph that "
            f"made `{site.target}`, so it neither frees that graph nor leaves its gradients in "
            "parameters that another optimizer steps on."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        if any((s.file, s.line) == found.again_read for s in chosen):
            return [
                "the first loss keeps its graph and trains what it trained; the second one "
                "no longer reaches into that graph, whose saved weights an optimizer step "
                "had already changed (so retain_graph=True could not cure it): each "
                "optimizer steps on its own loss alone"
            ]
        return [
            "retain_graph=True on the first backward call would also remove the error, but "
            "then its gradients reach parameters of an optimizer that steps later without "
            "zero_grad() in between (for a GAN: the generator trains on the discriminator's "
            "loss too); with the detach each optimizer steps on its own loss alone. The "
            "losses match the run with every graph retained up to that optimizer's first step"
        ]


KIND = DetachShared()
