"""The repair's sentences: an outcome in a few words, why no set of clones passed, and
why each edit of a verified patch fixes the conflict it answers.

Apart from ``autoclone.repair`` because they only word what the loop found: they read
records and outcomes and decide nothing.
"""

from __future__ import annotations

from autoclone.diagnose import explain
from autoclone.outcomes import Outcome, Passed, TimedOut
from autoclone.rounds import _Part
from autoclone.search import SearchResult


def _outcome_text(outcome: Outcome) -> str:
    """A verdict in a few words, for the progress lines and the summaries."""
    if isinstance(outcome, Passed):
        return "passed"
    if isinstance(outcome, TimedOut):
        return f"timed out after {outcome.seconds:.1f} s"
    return f"{outcome.kind}: {outcome.message}"


def _no_fix_reason(found: SearchResult, candidates: int) -> str:
    """The summary when ddmin found no passing set: out of time, or what all of them did."""
    if found.stopped:
        return "the time budget ran out before any set of clones passed"
    full = next((o for c, o in found.history if len(c) == candidates), None)
    why = f" (with every clone enabled: {_outcome_text(full)})" if full is not None else ""
    return (
        f"no set of the {candidates} candidate clones removes the error and keeps the numbers{why}"
    )


def _reasons(parts: list[_Part], lines: dict[str, list[str]]) -> str:
    """Why each edit fixes the conflict it answers; a later conflict is explained first."""
    out = []
    for index, part in enumerate(parts):
        if index:
            out.append(f"Conflict {index + 1}, met once the edits above were in:\n"
                       + explain(part.found, lines))  # fmt: skip
        out += [part.kind.why(s, part.found, lines) for s in part.sites]
    return "\n" + "\n".join(out)
