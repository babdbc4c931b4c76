"""Decide whether a trial passed: no autograd error AND the numbers the correct program computes.

The reference comes from one run of the original script under PyTorch's
``allow_mutation_on_saved_tensors`` (every forward value as written, every saved
tensor as it was when saved). Where that mode cannot run the script (errors raised
eagerly in the forward pass) the reference is the first loss computed with grad
disabled, which keeps the program's aliasing; the report says which one was used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autoclone.classify import classify
from autoclone.outcomes import Failed, Outcome, Passed, TimedOut
from autoclone.trial import RunResult

#: Relative tolerance: a clone computes the same kernels on the same values.
REL_TOL = 1e-6
ABS_TOL = 1e-9

FULL = "full"  # losses and gradient checksums at every backward call
FIRST_LOSS = "first_loss"  # the first loss only (forward-only reference)


@dataclass(frozen=True)
class Reference:
    """What a passing trial must reproduce."""

    kind: str
    losses: tuple[Any, ...]
    grads: tuple[tuple[Any, ...], ...]
    steps: int  # backward calls a passing run must complete (or the script's end)

    def describe(self) -> str:
        if self.kind == FULL:
            return (
                f"losses and gradients at {self.steps} backward call(s) of the original script "
                "run under torch.autograd.graph.allow_mutation_on_saved_tensors()"
            )
        return "the first loss of the original script computed with grad disabled"


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


def judge(result: RunResult, reference: Reference) -> Outcome:
    """Turn a run into an outcome against the reference."""
    if result.status == "timeout":
        return TimedOut(result.seconds)
    if result.status == "crash":
        return Failed("crash", "the script ended without a result (crashed or os._exit)")
    if result.status in ("error", "exit"):
        message = result.error.line if result.error else result.stderr.strip()[-300:]
        return Failed(classify(message), message)
    if result.status == "completed" and result.backward < reference.steps:
        return Failed("steps", f"ran {result.backward} backward calls, expected {reference.steps}")
    if reference.kind == FIRST_LOSS:
        return _judge_first_loss(result, reference)
    diff = _first_difference(result.losses, reference.losses, "loss")
    diff = diff or _first_difference(
        [g for pair in result.grads for g in pair],
        [g for pair in reference.grads for g in pair],
        "gradient checksum",
    )
    return Failed("numbers", diff) if diff else Passed()


def _judge_first_loss(result: RunResult, reference: Reference) -> Outcome:
    if not result.losses:
        return Failed("steps", "no backward call was reached")
    if not same(result.losses[0], reference.losses[0]):
        return Failed(
            "numbers", f"first loss is {result.losses[0]}, the reference has {reference.losses[0]}"
        )
    if any(isinstance(v, str) for v in result.losses):
        return Failed("numbers", "a loss is not finite")
    return Passed()
