"""The judge: a run against a reference, as numbers (no torch needed to decide)."""

from __future__ import annotations

from autoclone.oracle import FULL, PREFIX, Reference, judge, untrained
from autoclone.outcomes import Failed, Passed
from autoclone.trial import RunResult

# The mutation-allowed run met a carried state at its second backward call: it has the
# first call's loss and gradients, and the second call's loss (computed before it failed).
PREFIX_REF = Reference(PREFIX, (1.0, 0.5), ((2.0, 3.0),), 4, ended="backward_twice")


def _run(losses: tuple[float | str, ...], grads: tuple[tuple[float, float], ...]) -> RunResult:
    return RunResult("stopped", backward=len(grads), losses=losses, grads=grads)


def test_prefix_passes_on_the_numbers_it_has_then_finite_losses() -> None:
    run = _run((1.0, 0.5, 0.4, 0.3), ((2.0, 3.0), (9.0, 9.0), (8.0, 8.0), (7.0, 7.0)))
    assert isinstance(judge(run, PREFIX_REF), Passed)


def test_prefix_fails_when_a_number_it_has_differs() -> None:
    run = _run((1.0, 0.6, 0.4, 0.3), ((2.0, 3.0), (9.0, 9.0), (8.0, 8.0), (7.0, 7.0)))
    outcome = judge(run, PREFIX_REF)
    assert isinstance(outcome, Failed) and outcome.kind == "numbers"
    run = _run((1.0, 0.5, 0.4, 0.3), ((2.5, 3.0), (9.0, 9.0), (8.0, 8.0), (7.0, 7.0)))
    assert isinstance(judge(run, PREFIX_REF), Failed)


def test_prefix_fails_on_a_loss_that_is_not_finite_past_it() -> None:
    run = _run((1.0, 0.5, "nan", 0.3), ((2.0, 3.0), (9.0, 9.0), (8.0, 8.0), (7.0, 7.0)))
    assert isinstance(judge(run, PREFIX_REF), Failed)


def test_prefix_says_what_ended_the_reference_run() -> None:
    assert "backward_twice" in PREFIX_REF.describe()
    assert "1 backward call" in PREFIX_REF.describe()


def test_full_compares_every_backward_call() -> None:
    ref = Reference(FULL, (1.0, 0.5), ((2.0, 3.0), (4.0, 5.0)), 2)
    assert isinstance(judge(_run((1.0, 0.5), ((2.0, 3.0), (4.0, 5.0))), ref), Passed)
    assert isinstance(judge(_run((1.0, 0.5), ((2.0, 3.0), (4.0, 5.5))), ref), Failed)


def test_a_patch_that_leaves_a_trained_tensor_without_gradient_is_named() -> None:
    """The detach-like kinds' extra check: counted by shape, so one of two same-shaped
    weights going untrained is seen, and tensors new in the patched run are harmless."""
    original = {"16x8": 2, "8": 1, "": 1}
    assert untrained(original, {"16x8": 2, "8": 3, "": 1, "4": 1}) is None
    lost = untrained(original, {"16x8": 1, "8": 1})
    assert lost is not None and "1 of shape [16, 8]" in lost and "1 of shape []" in lost


def test_a_reference_by_output_rejects_a_run_that_printed_something_else() -> None:
    """The leaf-writes-as-data reference (a weight edited by hand, no backward after it):
    the same numbers are not enough, the printed output must be the reference's too."""
    from autoclone.oracle import OUTPUT

    ref = Reference(OUTPUT, (), (), 0, output="p(2) after 0.273033\n")
    assert isinstance(judge(RunResult("completed", stdout="p(2) after 0.273033\n"), ref), Passed)
    outcome = judge(RunResult("completed", stdout="p(2) after 0.378385\n"), ref)
    assert isinstance(outcome, Failed) and outcome.kind == "numbers"
