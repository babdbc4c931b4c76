"""Shrink a slow script for its trials: few epochs, small widths, small datasets.

A script that takes minutes to reach its error would make every trial take minutes.
Seed 000's author shrank the hyperparameters by hand before each rerun; this does it for
them, but only when it pays: a full-size run gets a short probe first, and a script that
reaches its error (or its end) within the probe is repaired at the user's own sizes.
A shrunk script must still fail with an autograd error; if it does not (no error, or a
shape error because two sizes were tied together), knobs are restored by ddmin over
their names until it does. The patch never contains a shrunk value: trial texts are
made from the originals, and the repair's last run is the patched script at full size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from autoclone.classify import NOT_AUTOGRAD, classify
from autoclone.codemods.knobs import Knob, shrink_source
from autoclone.outcomes import Failed, Outcome, Passed
from autoclone.search import find_minimal
from autoclone.trial import RunResult

#: Seconds a full-size run may take to reach its error before trials are shrunk.
PROBE = 5.0
#: Seconds a shrunk run may take: one slower than this is no faster than the full-size
#: run the probe saw, and is backed off like a shrunk run that lost the error.
SHRUNK_CAP = 4 * PROBE


@dataclass(frozen=True)
class Plan:
    """The knobs trials run shrunk; the empty plan is the user's own sizes."""

    knobs: tuple[Knob, ...] = ()

    def texts(self, texts: Mapping[str, str]) -> dict[str, str]:
        if not self.knobs:
            return dict(texts)
        return {rel: shrink_source(text, self.knobs) for rel, text in texts.items()}

    def options(self) -> dict[str, str]:
        """Argparse defaults the trial child changes."""
        return {k.name: str(k.small) for k in self.knobs if k.via == "option"}

    def describe(self) -> str:
        return ", ".join(k.shown for k in self.knobs)

    def as_json(self) -> list[dict[str, object]]:
        return [
            {"name": k.name, "from": k.value, "to": k.small, "file": k.file, "line": k.line}
            for k in self.knobs
        ]


#: Run the first (traced) run under a plan, with an optional shorter timeout.
Attempt = Callable[[Plan, float | None], RunResult]


def reproduces(result: RunResult) -> bool:
    """An autograd error, the only kind of failure a shrunk run may stand in for."""
    return (
        result.status == "error"
        and result.error is not None
        and classify(result.error.line) != NOT_AUTOGRAD
    )


def first_run(
    knobs: Iterable[Knob],
    attempt: Attempt,
    *,
    shrink: bool | None,
    timeout: float,
    say: Callable[[str], None],
) -> tuple[RunResult, Plan]:
    """The first run and the plan every later trial uses.

    ``shrink``: None probes a full-size run first, True shrinks at once, False never.
    """
    knobs = tuple(knobs)
    if not knobs or shrink is False:
        return attempt(Plan(), None), Plan()
    if shrink is None:
        probe = attempt(Plan(), min(PROBE, timeout))
        if probe.status != "timeout" or timeout <= PROBE:
            return probe, Plan()
        say(f"a full-size run did not reach the error within {PROBE:g} s: shrinking the script")
    return _back_off(knobs, attempt, say, min(SHRUNK_CAP, timeout))


def _back_off(
    knobs: tuple[Knob, ...], attempt: Attempt, say: Callable[[str], None], cap: float
) -> tuple[RunResult, Plan]:
    """Shrink every knob; if the error no longer shows, restore a 1-minimal set of knobs."""
    results: dict[frozenset[str], tuple[RunResult, Plan]] = {}

    def test(restored: frozenset[str]) -> Outcome:
        plan = Plan(tuple(k for k in knobs if k.name not in restored))
        say(f"trial sizes: {plan.describe() or 'full size'}")
        result = attempt(plan, cap)
        results[restored] = (result, plan)
        return Passed() if reproduces(result) else Failed(result.status)

    everything = frozenset(k.name for k in knobs)
    all_small = test(frozenset())
    if isinstance(all_small, Passed):
        return results[frozenset()]
    slow = results[frozenset()][0].status == "timeout"
    lost = f"took longer than {cap:g} s" if slow else "did not reproduce an autograd error"
    say(f"the shrunk script {lost}: restoring knobs")
    found = find_minimal(
        sorted(everything), test, known={frozenset(): all_small, everything: Passed()}
    )
    if found.best is None or found.best == everything:
        say("every knob is needed to reproduce the error: running at full size")
        return attempt(Plan(), None), Plan()
    return results[found.best]
