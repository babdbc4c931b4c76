"""Which non-clone edits the evidence supports, and what each one changes.

A ``detach`` changes what is differentiated, so it is offered only at the variable that
carries a graph from one iteration into the next (the tracer's carry edge), and the
report says so in plain words. A ``no_grad`` wraps the in-place update of a leaf.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.rewrites import as_detach, as_item, as_no_grad
from autoclone.codemods.sites import ARG, ASSIGN, INPLACE, OPERAND, SUBSCRIPT, Site
from autoclone.diagnose import Diagnosis, where

_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*$")


def _carried(found: Diagnosis, sites: Sequence[Site]) -> list[str]:
    """Variables read on the consumer line that are assigned on or after it: values that
    survive into the next iteration. Best first: assigned later in the loop body."""
    if found.carry_consumer is None:
        return []
    file, line = found.carry_consumer
    read = [s.target for s in sites if (s.file, s.line) == (file, line)
            and s.kind in (ARG, OPERAND) and _IDENTIFIER.match(s.target)]  # fmt: skip
    assigned = {s.assigned: s.line for s in sites if s.file == file and s.kind == ASSIGN
                and s.assigned and s.line >= line}  # fmt: skip
    carried = [name for name in dict.fromkeys(read) if name in assigned]
    return sorted(carried, key=lambda name: -assigned[name])


def detach_candidates(found: Diagnosis, sites: Sequence[Site]) -> list[Site]:
    """``h = h_next.detach()`` where the carried variable is reassigned later in the loop;
    for an accumulator (reassigned on the line that reads it) its read, detached or as a
    plain number; then the other reads on that line."""
    if found.carry_consumer is None:
        return []
    file, line = found.carry_consumer
    on_line = [s for s in sites if (s.file, s.line) == (file, line)]
    ordered: list[Site | None] = []
    for name in _carried(found, sites):
        later = [s for s in sites if s.file == file and s.kind == ASSIGN and s.assigned == name
                 and s.line > line]  # fmt: skip
        ordered += [as_detach(s) for s in sorted(later, key=lambda s: -s.line)]
        reads = [s for s in on_line if s.target == name and s.kind in (ARG, OPERAND)]
        ordered += [variant(s) for s in reads for variant in (as_detach, as_item)]
    rest = sorted((s for s in on_line if s.kind in (ARG, OPERAND, SUBSCRIPT)),
                  key=lambda s: -s.depth)  # fmt: skip
    ordered += [as_detach(s) for s in rest]
    unique = {s.id: s for s in ordered if s is not None}
    return list(unique.values())


def no_grad_candidates(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str]
) -> list[Site]:
    """The update that hit a leaf, with the neighbouring in-place updates at the same
    indentation (``w -= ...`` then ``b -= ...``), under one ``torch.no_grad()`` block."""
    frame = found.mutation or found.failing
    if frame is None:
        return []
    file, line = frame
    updates = {s.line: s for s in sites if s.file == file and s.kind == INPLACE and s.own_line}
    hit = updates.get(line)
    if hit is None:
        return []
    first, last = line, line
    while first - 1 in updates and updates[first - 1].indent == hit.indent:
        first -= 1
    while last + 1 in updates and updates[last + 1].indent == hit.indent:
        last += 1
    blocks = [(updates[first], tuple(range(first + 1, last + 1))), (hit, ())]
    wrapped = [as_no_grad(site, texts[file], block) for site, block in blocks]
    unique = {s.id + str(s.block): s for s in wrapped if s is not None}
    return list(unique.values())


def consequences(found: Diagnosis, site: Site, lines: dict[str, list[str]]) -> list[str]:
    """What the edit changes, said plainly: the report owes the user this."""
    notes: list[str] = []
    carried = site.assigned or site.target
    if site.fix == "detach":
        notes.append(
            f"this changes what is differentiated: gradients no longer flow from one "
            f"iteration into the previous one through `{carried}` (truncated "
            "backpropagation through time, the usual cure for a carried state)"
        )
    elif site.fix == "item":
        notes.append(
            f"this changes what is differentiated: `{carried}` keeps the value of earlier "
            "iterations but not their graphs, so each backward differentiates only the "
            "current step's part"
        )
    if site.fix in ("detach", "item"):
        failing = found.failing
        text = lines.get(failing[0], [""] * failing[1])[failing[1] - 1] if failing else ""
        if "retain_graph=True" in text:
            notes.append(
                f"`retain_graph=True` at {where(failing, lines)} is then unnecessary and "
                "keeps every step's graph in memory; consider removing it"
            )
    elif site.fix == "no_grad":
        notes.append(
            "the update now runs outside autograd, as a parameter update means to; the "
            "numbers match the original up to the failing step and the update's own values"
        )
    return notes


def optimizer_advice(found: Diagnosis, lines: dict[str, list[str]]) -> str:
    """The GAN case: name the step, the backward, and the cures people use."""
    return (
        f"The optimizer step at {where(found.mutation, lines)} updated weights in place that "
        f"the graph backpropagated at {where(found.failing, lines)} had saved earlier in the "
        f"same iteration (at {where(found.saved, lines)}). A clone or detach at one place "
        "would only silence the error (a detach there would silently stop training through "
        "that graph). Cures people use: recompute that forward pass (for a GAN, `D(fake)`) "
        "after the step, or run this backward before the step."
    )
