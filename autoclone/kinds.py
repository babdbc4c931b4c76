"""Which non-clone edits the evidence supports, and what each one changes.

A ``detach`` changes what is differentiated, so it is offered only at the variable that
carries a graph from one iteration into the next (the tracer's carry edge), and the
report says so in plain words; a state held as one tuple (an LSTM's ``hidden``) is
detached tensor by tensor. A ``no_grad`` wraps the in-place update of a leaf. A
``retain_graph=True`` goes on the first of two backward calls over one graph in one
iteration, and is judged against a run in which no backward call frees its graph.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence

from autoclone.codemods.rewrites import (
    as_detach,
    as_item,
    as_item_update,
    as_no_grad,
    as_optional_detach,
    as_optional_tuple_detach,
    as_tuple_detach,
    backward_call,
    detach_after,
    retain_graph,
)
from autoclone.codemods.sites import (
    ARG,
    ASSIGN,
    INPLACE,
    OPERAND,
    OUT_OF_PLACE,
    RETAIN_GRAPH,
    STATEMENT,
    SUBSCRIPT,
    Site,
)
from autoclone.diagnose import Diagnosis, Frame, crosses_iterations, where

_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*$")
_BUILDS_LSTM = re.compile(r"\bLSTM(Cell)?\(")


def _carried(frame: Frame, sites: Sequence[Site]) -> list[str]:
    """Variables read on the consumer line that are assigned on or after it: values that
    survive into the next iteration. Best first: assigned later in the loop body."""
    file, line = frame
    read = [s.target for s in sites if (s.file, s.line) == (file, line)
            and s.kind in (ARG, OPERAND) and _IDENTIFIER.match(s.target)]  # fmt: skip
    assigned = {name: s.line for s in sites if s.file == file and s.kind == ASSIGN
                and s.line >= line for name in s.bound}  # fmt: skip
    carried = [name for name in dict.fromkeys(read) if name in assigned]
    return sorted(carried, key=lambda name: -assigned[name])


def _carry_sets(frame: Frame, sites: Sequence[Site], text: str) -> list[list[Site | None]]:
    file, line = frame
    on_line = [s for s in sites if (s.file, s.line) == (file, line)]
    carried = _carried(frame, sites)
    reads = {n: [s for s in on_line if s.target == n and s.kind == ARG] for n in carried}
    sets: list[list[Site | None]] = []
    together = [as_detach(r[0]) for r in reads.values() if r]
    if len(together) > 1:
        sets.append(together)
    for name in carried:
        later = [s for s in sites if s.file == file and s.kind == ASSIGN and s.assigned == name
                 and s.line > line]  # fmt: skip
        sets += [[as_detach(s)] for s in sorted(later, key=lambda s: -s.line)]
        mine = [s for s in on_line if s.target == name and s.kind in (ARG, OPERAND)]
        variants = _read_variants(sites, _starts_as_none(name, text))
        sets += [[variant(s)] for s in mine for variant in variants]
    updates = [s for s in on_line if s.fix == OUT_OF_PLACE and s.kind == STATEMENT]
    sets += [[as_item_update(s)] for s in updates]  # ``total += loss`` carries ``total``
    return sets


def _after_backward_sets(
    found: Diagnosis, frames: Sequence[Frame], sites: Sequence[Site], texts: Mapping[str, str]
) -> list[list[Site | None]]:
    """The carried variables detached right after the backward call, tried first: that
    cuts the graph exactly at backward boundaries. A cut at every read would also cut
    between micro-steps of gradient accumulation, silently training on less data."""
    call = found.previous_backward or found.failing
    if call is None:
        return []
    file, line = call
    lines = texts.get(file, "").splitlines()
    if not 0 < line < len(lines):
        return []
    scope = _scope_of(texts[file], line)
    outer = next((f for f in frames if f[0] == file and _scope_of(texts[file], f[1]) == scope),
                 None)  # fmt: skip
    if outer is None:
        return []
    updated = [s.target for s in sites if (s.file, s.line) == outer
               and s.fix == OUT_OF_PLACE and s.kind == STATEMENT]  # fmt: skip
    names = list(dict.fromkeys(_carried(outer, sites) + updated))
    lstm = any(s.kind == ASSIGN and _BUILDS_LSTM.search(s.target) for s in sites)
    many = lstm and len(names) == 1  # an LSTM's state in one variable is the pair (h, c)
    text = lines[line - 1]
    each = [detach_after(file, line, text, name, many=many) for name in names]
    return ([each] if len(each) > 1 else []) + [[site] for site in each]


def _scope_of(source: str, line: int) -> tuple[int, int]:
    """Lines of the innermost function around ``line`` (the module: ``(0, 0)``): a frame
    whose variables the statement after the backward call can see."""
    best = (0, 0)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and node.lineno > best[0]:
                best = (node.lineno, end)
    return best


def _starts_as_none(name: str, text: str) -> bool:
    """``h = None`` somewhere, or ``h=None`` as a parameter default."""
    return re.search(rf"(^\s*{re.escape(name)}\s*=\s*None\b|\b{re.escape(name)}\s*=\s*None\s*[,)])",
                     text, re.MULTILINE) is not None  # fmt: skip


def _read_variants(
    sites: Sequence[Site], maybe_none: bool
) -> tuple[Callable[[Site], Site | None], ...]:
    """Ways to cut a carried read, best first. A state held as one tuple cannot be
    ``.detach()``-ed as a whole; when the program builds an LSTM (whose state is the pair
    ``(h, c)``) the tuple's tensors are detached first, else right after a plain detach.
    A state that starts as ``None`` is only detached once it exists."""
    lstm = any(s.kind == ASSIGN and _BUILDS_LSTM.search(s.target) for s in sites)
    if maybe_none:
        if lstm:
            return (as_optional_tuple_detach, as_optional_detach)
        return (as_optional_detach, as_optional_tuple_detach)
    if lstm:
        return (as_tuple_detach, as_detach, as_item)
    return (as_detach, as_tuple_detach, as_item)


def detach_candidates(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str] | None = None
) -> list[list[Site]]:
    """Edit sets to try, best first, for each user frame of the consuming node from the
    outermost (the training loop that carries state) in: ``h = h_next.detach()`` where
    the carried variable is reassigned later in the loop; for a state of several tensors
    (``(h, c)``) all of its reads together; for an accumulator (reassigned on the line
    that reads it) its read, detached or as a plain number. Last, single reads on the
    innermost consuming line. A state that starts as ``None`` gets a None-safe detach."""
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    if not frames:
        return []
    texts = texts or {}
    sets = _after_backward_sets(found, frames, sites, texts)
    sets += [edit_set for frame in reversed(frames)
             for edit_set in _carry_sets(frame, sites, texts.get(frame[0], ""))]  # fmt: skip
    file, line = frames[0]
    rest = sorted((s for s in sites if (s.file, s.line) == (file, line)
                   and s.kind in (ARG, OPERAND, SUBSCRIPT)), key=lambda s: -s.depth)  # fmt: skip
    sets += [[as_detach(s)] for s in rest]
    unique: dict[tuple[str, ...], list[Site]] = {}
    for edit_set in sets:
        if edit_set and all(s is not None for s in edit_set):
            chosen = [s for s in edit_set if s is not None]
            unique.setdefault(tuple(s.id for s in chosen), chosen)
    return list(unique.values())


def no_grad_candidates(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str]
) -> list[list[Site]]:
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
    unique = {s.id + str(s.block): [s] for s in wrapped if s is not None}
    return list(unique.values())


def consequences(
    found: Diagnosis, chosen: Sequence[Site], lines: dict[str, list[str]]
) -> list[str]:
    """What the edits change, said plainly: the report owes the user this."""
    notes: list[str] = []
    site = chosen[0]
    carried = ", ".join(f"`{s.assigned or s.target}`" for s in chosen)
    if site.fix == "detach" and _backpropagated(site, lines):
        notes.append(
            f"this changes what is differentiated: each backward call now differentiates "
            f"only what {carried} gathered since the previous one; the values it keeps (and "
            "prints) are unchanged"
        )
    elif site.fix == "detach":
        notes.append(
            f"this changes what is differentiated: gradients no longer flow from one "
            f"iteration into the previous one through {carried} (truncated "
            "backpropagation through time, the usual cure for a carried state)"
        )
    elif site.fix == "item":
        notes.append(
            f"this changes what is differentiated: {carried} keeps the value of earlier "
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
    elif site.fix == RETAIN_GRAPH:
        notes.append(
            "the gradients are those both backward calls meant to accumulate (checked against "
            "a run where no backward call frees its graph); adding the losses and calling "
            "backward once computes the same gradients in one pass and frees the graph at once"
        )
    return notes


def _backpropagated(site: Site, lines: dict[str, list[str]]) -> bool:
    """The detached variable is the one backward was called on: an accumulator."""
    text = lines.get(site.file, [])
    if not site.after or not 0 < site.after <= len(text):
        return False
    return text[site.after - 1].strip().startswith(f"{site.target}.backward(")


def retain_candidates(found: Diagnosis, lines: dict[str, list[str]]) -> list[list[Site]]:
    """``retain_graph=True`` on the backward call that first went through the graph, when
    the tracer saw both calls in one iteration (no carried state) and they backpropagate
    two different losses: the same loss twice is almost always a slip, not a design."""
    first = found.previous_backward
    if first is None or crosses_iterations(found) or same_loss_twice(found, lines):
        return []
    text = lines.get(first[0], [])
    if not 0 < first[1] <= len(text):
        return []
    return [[site] for site in retain_graph(first[0], first[1], text[first[1] - 1])]


def same_loss_twice(found: Diagnosis, lines: dict[str, list[str]]) -> bool:
    """Both backward calls are made on the same expression (``loss.backward()`` twice)."""
    calls = []
    for frame in (found.previous_backward, found.failing):
        text = lines.get(frame[0], []) if frame else []
        if not frame or not 0 < frame[1] <= len(text):
            return False
        calls.append(backward_call(text[frame[1] - 1]))
    return calls[0] is not None and calls[0] == calls[1]


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
