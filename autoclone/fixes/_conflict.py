"""What the in-place kinds (inplace=False, out of place, clone) share: when the evidence
is an in-place conflict, and the one ranking of sites they interleave by."""

from __future__ import annotations

from collections.abc import Sequence

from autoclone import classify as cls
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, crosses_iterations, optimizer_before_backward, priority
from autoclone.fixes.base import Candidate


def is_conflict(found: Diagnosis) -> bool:
    """A write into something autograd needs, inside one iteration (a write into a state
    carried across iterations is cured by cutting the carry; an optimizer step is not a
    write any edit can move)."""
    if found.error_class == cls.LEAF_INPLACE:
        # ``torch.utils.checkpoint`` ran a block again on a detached copy of its input (a
        # leaf): ``x += pos_bias``, legal without checkpointing, is made out of place
        return found.recomputed
    return (
        found.error_class in cls.CLONE_FIXABLE
        and not crosses_iterations(found)
        and not optimizer_before_backward(found)
    )


def ranked_sites(found: Diagnosis, sites: Sequence[Site], fix: str) -> list[Candidate]:
    """This kind's sites, ranked by where the evidence points (``priority``), so an
    out-of-place rewrite on the write line precedes a clone there, and both precede the
    saving line unless the write went through a view."""
    order = priority(found, sites)
    by_id = {s.id: s for s in sites}
    return [Candidate(rank, (by_id[i],)) for rank, i in enumerate(order) if by_id[i].fix == fix]
