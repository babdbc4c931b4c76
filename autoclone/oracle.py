"""Decide whether a trial passed: no autograd error AND the numbers the correct program computes.

The reference comes from one run of the original script under PyTorch's
``allow_mutation_on_saved_tensors`` (every forward value as written, every saved
tensor as it was when saved). Where that mode cannot run the script (errors raised
eagerly in the forward pass) the reference is the first loss computed with grad
disabled, which keeps the program's aliasing; the report says which one was used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autoclone.classify import classify
from autoclone.outcomes import Failed, Outcome, Passed, TimedOut
from autoclone.trial import RunResult

#: Relative tolerance: a clone computes the same kernels on the same values.
REL_TOL = 1e-6
ABS_TOL = 1e-9

FULL = "full"  # losses and gradient checksums at every backward call
FIRST_LOSS = "first_loss"  # the failing step's loss, computed with grad disabled
FINITE = "finite"  # no external reference: K steps with finite losses (detach fixes)
RETAINED = "retained"  # losses and gradients of a run where no backward frees its graph
#: The allow_mutation run up to where it failed with another autograd error (a second
#: conflict, of another kind): those backward calls' numbers, then finite losses.
PREFIX = "prefix"
#: A script that writes into a leaf by hand and may never call backward after it: the
#: run with leaf writes done as data (``LEAF_DATA``); its numbers and what it printed.
OUTPUT = "output"


@dataclass(frozen=True)
class Reference:
    """What a passing trial must reproduce."""

    kind: str
    losses: tuple[Any, ...]
    grads: tuple[tuple[Any, ...], ...]
    steps: int  # backward calls a passing run must complete (or the script's end)
    ended: str = ""  # PREFIX: the error that ended the reference run
    output: str = ""  # OUTPUT: what the reference run printed (its end)
    #: The run's optimizers per backward call, and their gradient checksums (``RunResult``)
    call_reach: tuple[Mapping[str, int], ...] = ()
    opt_grads: tuple[Mapping[str, Any], ...] = ()

    def describe(self) -> str:
        if self.kind == FULL:
            return (
                f"losses and gradients at {self.steps} backward call(s) of the original script "
                "run under torch.autograd.graph.allow_mutation_on_saved_tensors()"
            )
        if self.kind == RETAINED:
            return (
                f"losses and gradients at {self.steps} backward call(s) of the original script "
                "run with retain_graph=True forced on every backward call"
            )
        if self.kind == PREFIX:
            return (
                f"losses and gradients at the {len(self.grads)} backward call(s) the original "
                "script completed under torch.autograd.graph.allow_mutation_on_saved_tensors() "
                f"before it met another error ({self.ended}); after those, finite losses up "
                f"to {self.steps} backward calls"
            )
        if self.kind == OUTPUT:
            return (
                "the output and the losses and gradients of the original script run with its "
                "in-place writes into leaves done as data writes (as under torch.no_grad())"
            )
        if self.kind == FINITE:
            return (
                f"none: a detach changes what is differentiated on purpose, so the patched "
                f"script must complete {self.steps} backward calls with finite losses"
            )
        return (
            "losses and gradients of the original script up to the failing step, whose "
            "loss is computed with grad disabled"
        )


def same(a: Any, b: Any) -> bool:
    """Numbers as JSON gives them back: floats, or 'nan'/'inf' strings."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _first_difference(mine: Sequence[Any], ref: Sequence[Any], what: str) -> str | None:
    for index, (a, b) in enumerate(zip(mine, ref, strict=False)):
        if not same(a, b):
            return f"{what} at backward call {index + 1} is {a}, the reference has {b}"
    return None


def judge(result: RunResult, reference: Reference, cut: bool = False) -> Outcome:
    """Turn a run into an outcome against the reference (``cut``: see ``compare``)."""
    if result.status == "timeout":
        return TimedOut(result.seconds)
    if result.status == "crash":
        return Failed("crash", "the script ended without a result (crashed or os._exit)")
    if result.status in ("error", "exit"):
        message = result.error.line if result.error else result.stderr.strip()[-300:]
        return Failed(classify(message), message)
    if result.status == "completed" and result.backward < reference.steps:
        return Failed("steps", f"ran {result.backward} backward calls, expected {reference.steps}")
    if reference.kind == FINITE:
        return _judge_finite(result)
    if reference.kind in (FIRST_LOSS, PREFIX):
        return _judge_first_loss(result, reference, cut)
    if reference.kind == OUTPUT and not _printed_alike(result, reference):
        return Failed("numbers", "the script printed something else than the reference did")
    diff = compare(result, reference, cut)
    return Failed("numbers", diff) if diff else Passed()


def _printed_alike(result: RunResult, reference: Reference) -> bool:
    """The run printed what the reference did; a run that went on past the call the
    reference stopped at (a verification run goes on for a while) printed it first."""
    if result.stdout == reference.output:
        return True
    return result.backward > reference.steps and result.stdout.startswith(reference.output)


def compare(result: RunResult, reference: Reference, cut: bool = False) -> str | None:
    """The first loss or gradient checksum that differs from the reference (as far as
    both go), in words; None when they agree. With ``cut`` (a later edit of the patch
    cuts a graph on purpose), a call whose checksum differs only because it no longer
    reaches some optimizer's parameters passes if every optimizer it still reaches got
    the reference's gradients: the parameters the cut does not touch keep theirs."""
    loss = _first_difference(result.losses, reference.losses, "loss")
    if loss:
        return loss
    for call, (mine, ref) in enumerate(zip(result.grads, reference.grads, strict=False)):
        for a, b in zip(mine, ref, strict=False):
            if not same(a, b) and not (cut and _only_cut(result, reference, call)):
                return (f"gradient checksum at backward call {call + 1} is {a}, the reference "
                        f"has {b}")  # fmt: skip
    return None


def _only_cut(result: RunResult, reference: Reference, call: int) -> bool:
    """The call reaches fewer optimizers than the reference's, and the same gradients in
    each of those it reaches."""
    if call >= min(len(result.call_reach), len(reference.call_reach),
                   len(result.opt_grads), len(reference.opt_grads)):  # fmt: skip
        return False
    mine, theirs = set(result.call_reach[call]), set(reference.call_reach[call])
    if any(result.call_reach[call][o] != reference.call_reach[call][o] for o in mine & theirs):
        return False  # a cut that took some of an optimizer's parameters out of the call
    if not mine < theirs:
        return False
    got, want = result.opt_grads[call], reference.opt_grads[call]
    return all(
        len(got.get(o, ())) == 2
        and all(same(a, b) for a, b in zip(got[o], want.get(o, ("?", "?")), strict=True))
        for o in mine
    )


def _judge_finite(result: RunResult) -> Outcome:
    if any(isinstance(v, str) for v in result.losses):
        return Failed("numbers", "a loss is not finite")
    return Passed()


def _judge_first_loss(result: RunResult, reference: Reference, cut: bool) -> Outcome:
    """Every step the original completed must match, and the failing step's loss too."""
    if len(result.losses) < len(reference.losses):
        return Failed(
            "steps", f"reached {len(result.losses)} backward calls of {len(reference.losses)}"
        )
    diff = compare(result, reference, cut)
    if diff:
        return Failed("numbers", diff)
    return _judge_finite(result)


def untrained(original: Mapping[str, int], patched: Mapping[str, int]) -> str | None:
    """What a patch stopped differentiating: tensors (counted by shape) that backward calls
    of the original reached and none of the patched run's did. A detach that passes every
    number check can still freeze a parameter for good (a learnable temperature, a GNN
    encoder whose embeddings are detached), which is never what the script meant."""
    lost = {shape: n - patched.get(shape, 0) for shape, n in original.items()
            if patched.get(shape, 0) < n}  # fmt: skip
    if not lost:
        return None
    shapes = ", ".join(f"{n} of shape {shape_text(s)}" for s, n in sorted(lost.items()))
    return (
        f"no gradient reaches tensors the original differentiated ({shapes}): they would "
        "stop training"
    )


def stale_steps(original: Sequence[Mapping[str, int]], run: RunResult) -> str | None:
    """A backward call that no longer reaches parameters of the optimizer stepping right
    after it which the original's same call reached (``original``: each call's count of
    reached parameters per optimizer). That step then uses what other losses left in
    their ``.grad``, or nothing: a cut at the wrong end of a graph (a GAN's cached fake
    detached after the discriminator's backward, so the generator's own loss never reaches
    the generator; a head's loss cut off from the encoder its optimizer also steps) passes
    every other check."""
    for call, stepped in enumerate(run.steps_after):
        if call >= min(len(original), len(run.call_reach)):
            break
        for o in map(str, stepped):
            if run.call_reach[call].get(o, 0) < original[call].get(o, 0):
                return (
                    f"backward call {call + 1} no longer reaches some parameters of the "
                    f"optimizer that steps after it (optimizer {int(o) + 1} in the order the "
                    "script made them): that step would use gradients other losses left "
                    "behind, or none"
                )
    return None


def shape_text(key: str) -> str:
    """``"16x8"`` (a tensor counted by shape in a trial's result) as ``[16, 8]``."""
    return f"[{key.replace('x', ', ')}]"
