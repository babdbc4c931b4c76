"""The result of a repair, as a value: what the CLI prints, maps to an exit code, or writes.

Explanations are written for someone who wants to learn why: which line saved the
tensor, which line changed it, and why the chosen edit makes backward see the values
it saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.sites import (
    ARG,
    ASSIGN,
    DETACH,
    INPLACE,
    INPLACE_FALSE,
    ITEM,
    NO_GRAD,
    OPERAND,
    OUT_OF_PLACE,
    RETAIN_GRAPH,
    STATEMENT,
    SUBSCRIPT,
    Site,
)
from autoclone.diagnose import Diagnosis, op_name, where
from autoclone.patch import SourceFile

FIXED = "fixed"
NO_ERROR = "no_error"
UNFIXABLE = "unfixable"
NOT_AUTOGRAD = "not_autograd"
TIMEOUT = "timeout"
BAD_INPUT = "bad_input"

EXIT_CODES = {FIXED: 0, NO_ERROR: 0, UNFIXABLE: 1, NOT_AUTOGRAD: 1, TIMEOUT: 1, BAD_INPUT: 2}


@dataclass(frozen=True)
class Edit:
    """One line of the patch as the report lists it."""

    file: str
    line: int
    kind: str  # the fix: clone, out_of_place, detach, item, no_grad or inplace_false
    code: str
    site: str = ""  # where: assign, subscript, arg, operand, inplace or statement

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "kind": self.kind, "code": self.code,
                "site": self.site}  # fmt: skip


@dataclass
class Report:
    """Everything a repair found out. ``changes`` holds verified new texts for ``fix``."""

    status: str
    summary: str
    error: str = ""
    error_class: str = ""
    patch: str = ""
    patch_bytes: bytes = b""  # the same diff, each file's lines in that file's encoding
    edits: list[Edit] = field(default_factory=list)
    runs: int = 0
    candidates: int = 0
    seconds: float = 0.0
    explanation: str = ""
    reference: str = ""
    steps: dict[str, int] = field(default_factory=dict)
    minimal: bool = False
    notes: list[str] = field(default_factory=list)
    diagnosis: dict[str, Any] = field(default_factory=dict)
    shrunk: list[dict[str, Any]] = field(default_factory=list)  # knobs trials ran small
    changes: list[tuple[SourceFile, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary": self.summary,
            "error": {"class": self.error_class, "message": self.error},
            "patch": self.patch,
            "edits": [e.as_json() for e in self.edits],
            "runs": self.runs,
            "candidates": self.candidates,
            "seconds": round(self.seconds, 3),
            "explanation": self.explanation,
            "reference": self.reference,
            "steps": self.steps,
            "minimal": self.minimal,
            "notes": self.notes,
            "diagnosis": self.diagnosis,
            "shrunk": self.shrunk,
        }


_WHAT = {
    ASSIGN: "the value assigned",
    SUBSCRIPT: "the slice read",
    ARG: "the argument",
    OPERAND: "the operand",
}


def why(site: Site, d: Diagnosis, lines: dict[str, list[str]]) -> str:
    """Why this clone removes the conflict without changing what is computed."""
    at = where((site.file, site.line), lines)
    if site.fix in (DETACH, ITEM):
        carried = site.assigned or site.target
        fix = f"Fix at {at}: `{site.code}`"
        if site.kind == STATEMENT:  # a statement of its own, inserted before the reading one
            fix = f"Fix: `{site.code}` just before {at}"
        if site.after:  # inserted after the backward call that used the graph
            fix = f"Fix: `{site.code}` right after {where((site.file, site.after), lines)}"
        return (
            f"{fix}: the graph built in one iteration is no longer "
            f"carried into the next through `{carried}`, so backward stops at this iteration."
        )
    if site.fix == INPLACE_FALSE:
        return (
            f"Fix at {at}: `inplace=False`: the module then writes its result into a new "
            "tensor, and the tensor saved for backward stays as it was."
        )
    if site.fix == NO_GRAD:
        return (
            f"Fix: `with torch.no_grad():` around {at}: an update of a leaf tensor is not "
            "part of the model's computation, so autograd must not record it."
        )
    if site.fix == OUT_OF_PLACE:
        return _why_out_of_place(site, d, at)
    if site.fix == RETAIN_GRAPH:
        return (
            f"Fix at {at}: `retain_graph=True`: this backward call keeps the buffers its "
            "graph saved, so the second backward call through the same graph can use them."
        )
    if site.kind == INPLACE:
        fix = f"Fix: `{site.code}` just before {at}: "
        if d.error_class == INPLACE_VERSION:
            return fix + (
                "the write lands in a private copy, so the tensor saved for "
                "backward keeps the version it had when it was saved."
            )
        return fix + "the write goes to an ordinary tensor instead of a view autograd cannot track."
    fix = f"Fix at {at}: clone {_WHAT.get(site.kind, 'the value')} `{site.target}`: "
    if d.error_class != INPLACE_VERSION:
        return fix + (
            "the in-place write then modifies an ordinary tensor instead of a view "
            "whose changes autograd cannot track."
        )
    if (site.file, site.line) == d.mutation and d.mutation != d.saved:
        return fix + (
            f"the in-place {d.mutation_op or 'operation'} then writes into a copy, and the "
            "tensor saved for backward stays as it was."
        )
    saver = op_name(d.saved_op) or "the operation"
    return fix + (
        f"{saver} then saves a private copy, which the later in-place write cannot reach; "
        "everything else still sees the write."
    )


def _why_out_of_place(site: Site, d: Diagnosis, at: str) -> str:
    """The rewrite computes the same numbers; only where they are stored changes."""
    fix = f"Fix at {at}: `{site.code}`: the result goes into a new tensor bound to `{site.target}`"
    if d.error_class != INPLACE_VERSION:
        return fix + (
            ", an ordinary tensor instead of a view autograd cannot let you write into; "
            "the numbers are the same."
        )
    return fix + (
        ", so the tensor saved for backward keeps the values it had when it was saved; "
        "the numbers are the same."
    )


def edits_of(sites: Sequence[Site]) -> list[Edit]:
    return [Edit(s.file, s.line, s.fix, s.code, s.kind) for s in sites]
