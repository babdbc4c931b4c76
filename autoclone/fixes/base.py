"""What every fix kind provides, and what it is given to decide.

A fix kind is one module under ``autoclone.fixes`` exposing ``KIND``, an object with
this interface. The repair loop never branches on a kind's name: it asks each kind
whether the diagnosis supports it, for its candidate edit sets (best first, with a
rank so kinds judged alike interleave), which reference run judges them, how a run is
judged against it, and the sentences that explain a chosen edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis
from autoclone.oracle import (
    FINITE,
    PREFIX,
    Reference,
    compare,
    judge,
    shape_text,
    stale_steps,
    untrained,
)
from autoclone.outcomes import Failed, Outcome, Passed
from autoclone.trial import RunResult

#: Reference runs a kind can ask for (``autoclone.repair`` computes them once each).
#: The numbers the script meant: the run under ``allow_mutation_on_saved_tensors`` for a
#: version error, else the failing step's forward pass with grad disabled.
SAME_NUMBERS = "same_numbers"
RETAINED = "retained"  # no backward call frees its graph
NONE = "none"  # a detach: what is differentiated changes on purpose
CONSTANT_TARGETS = "constant_targets"  # every watched loss's target detached where taken


@dataclass(frozen=True)
class Context:
    """The user's project as the kinds see it: sites, texts and lines, read once, and
    what the runs showed (``evidence``: ``before``, the backward calls the original
    completed; ``completed``, their losses and gradients; ``call_reach``, the optimizers
    each of its backward calls reached, the failing one too; ``leaks``, gradient leaks
    between optimizers in the retained-graph run)."""

    sites: Sequence[Site]
    texts: Mapping[str, str]
    lines: Mapping[str, list[str]]
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def line(self, file: str, number: int) -> str:
        text = self.lines.get(file, [])
        return text[number - 1] if 0 < number <= len(text) else ""


@dataclass(frozen=True)
class Candidate:
    """One edit set to verify. Lower ``rank`` is tried first among kinds judged alike."""

    rank: float
    sites: tuple[Site, ...]


class FixKind(Protocol):
    """One way of repairing an autograd error; see the module docstring."""

    name: str
    reference: str
    lenient: bool
    neutral: bool

    def supports(self, found: Diagnosis, ctx: Context) -> bool: ...

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]: ...

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome: ...

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str: ...

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]: ...

    def rebased(self, reference: Reference, ctx: Context) -> Reference: ...

    def refusal(self, found: Diagnosis, ctx: Context) -> str: ...

    def advice(self, found: Diagnosis, ctx: Context) -> str: ...


class Kind:
    """Defaults most kinds share: the reference's own verdict, no extra notes, and a
    refusal that says no edit of this kind fits."""

    name = ""
    reference = SAME_NUMBERS
    #: Its judge may accept numbers the reference does not have; its notes say why, and
    #: are left out when the patch reproduced the reference after all.
    lenient = False

    #: Error classes the default ``supports`` answers with ``edits``
    classes: tuple[str, ...] = ()

    #: The edit changes no value and no gradient (a hook guarded where it could never
    #: run): a loss with no graph the patched run then meets is the next conflict.
    neutral = False

    #: A patch whose numbers differ from the reference's is judged again against the
    #: program with every ``inplace`` flag off (``repair``): the write-allowed reference
    #: keeps an alias an in-place module's write made (an identity shortcut of its input)
    alias_reference = False

    #: The backward calls the original completed must come out the same (an edit at an
    #: iteration's boundary, or one that recomputes what the original computed first).
    keeps_prefix = False

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        """The diagnosis is of one of ``classes`` and ``edits`` finds a site (a file that
        does not parse offers none)."""
        if found.error_class not in self.classes:
            return False
        try:
            return bool(self.edits(found, ctx))
        except SyntaxError:
            return False

    def edits(self, found: Diagnosis, ctx: Context) -> Sequence[Site]:
        """The sites the kind would edit for this diagnosis."""
        return ()

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        """Each site of ``edits`` alone, in their order."""
        return ranked([[s] for s in self.edits(found, ctx)])

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        """The reference's verdict; a detach-like kind (no reference numbers) must also
        leave every tensor the original differentiated still reached by a backward call,
        and with ``keeps_prefix`` reproduce the calls the original completed."""
        outcome = judge(run, reference, cut=bool(ctx.evidence.get("cut")))
        if reference.kind == FINITE and self.reference != NONE:  # no numbers to compare
            lost = cut_loses(run, ctx) if isinstance(outcome, Passed) else ""
            return Failed("numbers", lost) if lost else every_update_reached(run, outcome)
        if self.reference != NONE or not isinstance(outcome, Passed):
            return outcome
        lost = cut_loses(run, ctx)
        if lost:
            return Failed("numbers", lost)
        changed = _prefix_change(run, ctx) if self.keeps_prefix else None
        if changed:
            return Failed(
                "numbers", f"the backward calls the original completed changed: {changed}"
            )
        return outcome

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return []

    def rebased(self, reference: Reference, ctx: Context) -> Reference:
        """An earlier conflict's reference as this kind's edit changes which tensor a
        backward call differentiates (the program's numbers are the same): what the
        earlier kind's judge reads. Most edits leave every call's tensor as it was."""
        return reference

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return f"no {self.name} edit is supported by the evidence for this error"

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        """What a person would do where this kind offers nothing: ends every refusal."""
        return ""


def calls_before(reference: Reference, ctx: Context) -> Reference:
    """An earlier conflict's reference with only the calls before the failing one: for an
    edit that changes, on purpose, what the failing call and those after it compute."""
    at = int(ctx.evidence.get("before", 0))
    return replace(reference, losses=reference.losses[:at], grads=reference.grads[:at])


def every_update_reached(run: RunResult, outcome: Outcome) -> Outcome:
    """``outcome``, or a failure where a passing run left tensors an optimizer updates
    without any gradient (a write done under ``no_grad`` that was the trained value)."""
    if not isinstance(outcome, Passed) or not run.unreached:
        return outcome
    shapes = ", ".join(shape_text(s) for s in sorted(run.unreached))
    return Failed("numbers", f"no gradient reaches tensors an optimizer updates ({shapes})")


def ranked(sites: Sequence[Sequence[Site]], start: float = 0.0) -> list[Candidate]:
    """Edit sets in the order given, ranked from ``start``."""
    return [Candidate(start + i, tuple(s)) for i, s in enumerate(sites)]


def cut_loses(run: RunResult, ctx: Context, untouched: bool = True) -> str:
    """What a cut took from the program, or "": a stale step (a backward call no longer
    reaches parameters that the optimizer stepping after it trained in the original) or,
    with ``untouched``, a tensor the original differentiated that no call reaches now."""
    stale = stale_steps(ctx.evidence.get("call_reach", ()), run)
    if stale or not untouched:
        return stale or ""
    return untrained(ctx.evidence.get("reached", {}), run.reached) or ""


def _prefix_change(run: RunResult, ctx: Context) -> str | None:
    """Where the run differs from the backward calls the original completed, if it does."""
    losses, grads = ctx.evidence.get("completed", ([], []))
    return compare(run, Reference(PREFIX, tuple(losses), tuple(map(tuple, grads)), len(grads)))
