"""The repair's rounds as values, and the tests on them that steer ``autoclone.repair``.

A round predicts edits for one conflict and verifies each as a patched run. What it keeps
are records (where a run failed, the edits a kind contributed, what edits are judged by,
a verified run), and what it decides are pure tests on runs and outcomes: did the run
get further or did the edit break its own line, is a traced conflict the one already
answered, how many tries a round has, how many lines an edit set changes. They hold no
state of the loop, so they live apart from the ``_Repair`` class that drives them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from autoclone import classify as cls
from autoclone.codemods.sites import CLONE, DETACH, INPLACE_FALSE, OUT_OF_PLACE, STATEMENT, Site
from autoclone.diagnose import Diagnosis, Frame, in_inference_loop
from autoclone.fixes._ast import tensor_method_on_target
from autoclone.fixes.base import Candidate, Context, FixKind
from autoclone.oracle import Reference
from autoclone.outcomes import Failed, Outcome
from autoclone.trial import RunResult

#: Predicted edits verified directly (each a patched run) before falling back to ddmin.
PREDICTIONS = 3
#: Errors a patched run may fail with and still have got further: another conflict. (A
#: loss with no graph left means an edit cut too much, not that it got anywhere.)
_AUTOGRAD = frozenset(cls.DESCRIPTIONS) - {cls.NOT_AUTOGRAD, cls.NO_GRAPH}


class _Point(NamedTuple):
    """Where a run of the script (as patched so far) failed, and what the tracer said."""

    found: Diagnosis
    line: str
    backward: int
    #: The run's own innermost frame of the error (a framework's ``trainer.fit(...)``
    #: where the tracer names the loss line): a patched run failing there did not move
    frame: Frame | None = None
    #: The lines of the user's files the run had executed when it failed there, as
    #: original lines (None: not known); see ``autoclone.needed``
    executed: frozenset[Frame] | None = None


@dataclass(frozen=True)
class _Part:
    """Edits one kind contributed, with the diagnosis they answer: the report's reasons."""

    kind: FixKind
    found: Diagnosis
    sites: tuple[Site, ...]
    executed: frozenset[Frame] | None = None  # the conflict's ``_Point.executed``
    backward: int = 0  # the backward calls the script completed before this conflict


@dataclass(frozen=True)
class _Goal:
    """What every predicted edit set is judged by, along one path of conflicts: the
    first conflict's kinds and reference, and the reference each kind met so far asks
    for (``refs``, by name: a later conflict may need another, a carried state after a
    version error, computed on the script as patched up to it)."""

    kinds: list[FixKind]
    reference: Reference
    limit: int
    ctx: Context
    refs: Mapping[str, Reference] = field(default_factory=dict)


class _Verified(NamedTuple):
    """A patched run: the edits, the patched texts, what the run computed, and (once it
    passed) which kind contributed which edits for which conflict."""

    sites: list[Site]
    patched: dict[str, str]
    run: RunResult
    parts: list[_Part] = []
    refs: Mapping[str, Reference] = {}  # what each kind's edits were judged by


def _tries(options: list[tuple[FixKind, Candidate]]) -> int:
    """Predicted edits verified per round: every inplace=False flag (ranked below 0) and
    the best ``PREDICTIONS`` + 1 of the rest."""
    return sum(1 for _, c in options if c.rank < 0) + PREDICTIONS + 1


def _broke_itself(outcome: Outcome, at: Frame | None, cand: Candidate) -> bool:
    """The edit raised a plain Python error on its own line (``total.detach()`` where
    ``total`` is still the float ``0.0``): it tells nothing about the conflict, so it does
    not use up one of the round's tries."""
    failed = isinstance(outcome, Failed) and outcome.kind == cls.NOT_AUTOGRAD
    return failed and at is not None and any((s.file, s.line) == at for s in cand.sites)


_NO_METHOD = re.compile(r"object has no attribute '(detach|clone)'")


def _not_tensors(outcome: Outcome, cand: Candidate) -> set[str]:
    """What an edit that broke itself showed is no tensor: the target of its one
    ``.detach()``/``.clone()``, where that call raised ``AttributeError``. The same call
    at another read of it (``ALPHA * Z + (1 - ALPHA) * y``) would only raise again."""
    calls = [s for s in cand.sites if s.fix in (DETACH, CLONE)]
    no_method = isinstance(outcome, Failed) and _NO_METHOD.search(outcome.message)
    return {calls[0].target} if no_method and len(calls) == 1 else set()


def _on_non_tensor(cand: Candidate, targets: set[str]) -> bool:
    return any(s.target in targets and tensor_method_on_target(s, rebinding=False)
               for s in cand.sites)  # fmt: skip


def _got_further(
    outcome: Outcome, run: RunResult, point: _Point, moved: bool = False, neutral: bool = False
) -> bool:
    """The patched run failed with an autograd error, a different one, later, or on
    another line (the next of four ``clamp_`` writes into the outputs of one ``unbind``).
    A loss with no graph counts only where grad was switched off by something else than
    the edit: a framework's inference-mode evaluation loop (``trainer.test()``), a
    ``torch.set_grad_enabled(False)`` still in force when the error left the script, or
    anything, after a ``neutral`` edit (one that changes no value and no gradient)."""
    if not isinstance(outcome, Failed) or run.error is None:
        return False
    # (or where the run saw ``torch.tensor`` copy a tensor that had a graph: lost there)
    switched_off = (neutral or run.error.grad_off or in_inference_loop(run.error.frames)
                    or bool(run.copied))  # fmt: skip
    if outcome.kind not in _AUTOGRAD and not (outcome.kind == cls.NO_GRAPH and switched_off):
        return False
    return _shape(run.error.line) != _shape(point.line) or run.backward > point.backward or moved


def _failing_frame(run: RunResult, move: Callable[[Frame], Frame]) -> Frame | None:
    """Where a patched run failed, innermost frame of the user's, as an original line."""
    own = [f for f in (run.error.frames if run.error else ()) if not f[0].startswith("/")]
    return move(own[-1]) if own else None


def _shape(line: str) -> str:
    """An error line as PyTorch's and the tracer's check both word it, without numbers: a
    clone that only moves a version count (``is at version 12`` instead of ``10``) has
    not got any further."""
    line = re.split(r"\. Hint:| \(autograd check made by autoclone\)", line)[0]
    return re.sub(r"\d+", "#", line.replace("torch::autograd::", "")).rstrip(".")


#: Errors raised by the statement at fault (``h.detach_()`` on a view, ``t.requires_grad =
#: False`` on a computed tensor), not by a backward call: the failing line is the conflict.
_RAISED_WHERE_MADE = frozenset(
    {cls.DETACH_VIEW, cls.NONLEAF_REQUIRES_GRAD, cls.SEED_SHAPE, cls.OUT_ARGUMENT}
)


def _conflict(found: Diagnosis) -> tuple[Any, ...]:
    """What makes two diagnoses the same conflict, whatever backward call the run failed
    on (for an error the statement at fault raises, that statement's line; for a graph a
    ``torch.autograd.grad`` call freed, that call: VQGAN's adaptive weight takes two)."""
    at = found.failing if found.error_class in _RAISED_WHERE_MADE else None
    return (found.error_class, found.saved, found.mutation, found.view, found.module_built,
            found.carry_consumer, found.previous_backward, at, found.grad_call)  # fmt: skip


def _lines(sites: list[Site]) -> int:
    """Lines a set of edits changes: an inserted statement is a line of its own."""
    inserted = sum(1 for s in sites if s.kind == STATEMENT)
    return inserted + len({(s.file, s.line) for s in sites if s.kind != STATEMENT})


def _error_gone(outcome: Outcome, original: str) -> bool:
    """The original error went away, but some clones broke something else (the numbers,
    or a clone turned a parameter into a non-leaf): the set holds a fixer and breakers."""
    return isinstance(outcome, Failed) and outcome.kind not in (original, "crash", "steps")


def _rebased(reference: Reference, kind: FixKind, last: FixKind | None, ctx: Context) -> Reference:
    """An earlier conflict's reference as the newest conflict's edit reads it."""
    return last.rebased(reference, ctx) if last is not None and last is not kind else reference


_VIEW_ERRORS = frozenset({cls.NO_GRAD_VIEW, cls.MULTI_OUTPUT_VIEW})


def _moved_on(found: Diagnosis, traced: RunResult, point: _Point) -> bool:
    """The traced conflict is not the one this round answered, seen again."""
    if _conflict(found) == _conflict(point.found) and traced.backward <= point.backward:
        return False
    same_view = found.view is None or found.view == point.found.view
    same_write = found.mutation == point.found.mutation  # not the next of several writes
    # a view error about no new view and no new write: written another way, no further
    return not (found.error_class in _VIEW_ERRORS and same_view and same_write
                and found.error_class == point.found.error_class
                and traced.backward <= point.backward)  # fmt: skip


def _cuts_nothing(kind: FixKind, cand: Candidate) -> bool:
    """The edit can give no loss a graph's loss: a ``neutral`` kind's, or a write made out
    of place, cloned or no longer in place (each result has every graph its inputs have),
    so a loss with no graph met after it is the next conflict (a frozen backbone under
    ``no_grad`` behind the repaired write)."""
    return getattr(kind, "neutral", False) or all(
        s.fix in (OUT_OF_PLACE, CLONE, INPLACE_FALSE) for s in cand.sites)
