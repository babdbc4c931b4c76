"""The result of a repair, as a value: what the CLI prints, maps to an exit code, or writes.

Explanations are written for someone who wants to learn why: which line saved the
tensor, which line changed it, and why the chosen edit makes backward see the values
it saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from autoclone.classify import DESCRIPTIONS, saved_by
from autoclone.codemods.sites import ARG, ASSIGN, INPLACE, OPERAND, SUBSCRIPT, Site
from autoclone.patch import SourceFile

FIXED = "fixed"
NO_ERROR = "no_error"
UNFIXABLE = "unfixable"
NOT_AUTOGRAD = "not_autograd"
TIMEOUT = "timeout"
BAD_INPUT = "bad_input"

EXIT_CODES = {FIXED: 0, NO_ERROR: 0, UNFIXABLE: 1, NOT_AUTOGRAD: 1, TIMEOUT: 1, BAD_INPUT: 2}

#: What a backward function keeps from the forward pass, in the words of seed 004.
SAVES = {
    "Exp": "its output (the derivative of exp(x) is exp(x))",
    "Sigmoid": "its output (sigmoid' = s * (1 - s))",
    "Tanh": "its output (tanh' = 1 - tanh^2)",
    "Relu": "its output (to know where it was positive)",
    "Softmax": "its output (softmax' is written in terms of softmax)",
    "LogSoftmax": "its output",
    "Pow": "its input (the derivative of x**2 is 2*x)",
    "Mul": "its inputs (each factor's gradient needs the other factor)",
    "Div": "its inputs",
    "Addmm": "its inputs (a linear layer needs its input for the weight gradient)",
    "Mm": "its inputs (a matrix product needs each side for the other's gradient)",
    "Bmm": "its inputs",
    "Linear": "its input (for the weight gradient)",
    "Sqrt": "its output",
    "Log": "its input",
    "Sin": "its input",
    "Cos": "its input",
}


@dataclass(frozen=True)
class Edit:
    """One line of the patch as the report lists it."""

    file: str
    line: int
    kind: str
    code: str

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "kind": self.kind, "code": self.code}


@dataclass
class Report:
    """Everything a repair found out. ``changes`` holds verified new texts for ``fix``."""

    status: str
    summary: str
    error: str = ""
    error_class: str = ""
    patch: str = ""
    edits: list[Edit] = field(default_factory=list)
    runs: int = 0
    candidates: int = 0
    seconds: float = 0.0
    explanation: str = ""
    reference: str = ""
    steps: dict[str, int] = field(default_factory=dict)
    minimal: bool = False
    notes: list[str] = field(default_factory=list)
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
        }


def _where(frame: tuple[str, int] | None, lines: dict[str, list[str]]) -> str:
    if frame is None:
        return "an unknown line"
    file, line = frame
    source = lines.get(file, [])
    text = source[line - 1].strip() if 0 < line <= len(source) else ""
    return f"{file}:{line} `{text}`" if text else f"{file}:{line}"


def _op_name(grad_fn: str) -> str:
    name = grad_fn.removesuffix("0").removesuffix("Backward")
    return name.split("::")[-1]


def cause(
    error_class: str,
    message: str,
    forward_op: str,
    save: tuple[str, int] | None,
    failing: tuple[str, int] | None,
    lines: dict[str, list[str]],
) -> str:
    """Plain words for what went wrong, before any repair was tried."""
    parts = [
        f"What failed: {DESCRIPTIONS.get(error_class, error_class)}, at {_where(failing, lines)}."
    ]
    found = saved_by(message)
    op = _op_name(forward_op or (found[1] if found else ""))
    if save is not None:
        keeps = SAVES.get(op, "a tensor it needs to compute the gradient")
        parts.append(
            f"Saved for backward at {_where(save, lines)}: {op or 'this op'} keeps {keeps}."
        )
    return "\n".join(parts)


def why(site: Site, error_class: str, lines: dict[str, list[str]]) -> str:
    """Why this one clone removes the conflict without changing what is computed."""
    at = _where((site.file, site.line), lines)
    if site.kind == INPLACE:
        base = f"Modified in place at {at}. Fix: `{site.code}` just before it"
        if error_class == "inplace_version":
            return base + (
                ": the write lands in a private copy, so the tensor saved for "
                "backward keeps the version it had when it was saved."
            )
        return base + (
            ": the write goes to an ordinary tensor instead of a view that autograd cannot track."
        )
    what = {
        ASSIGN: "the value assigned",
        SUBSCRIPT: "the slice read",
        ARG: "the argument",
        OPERAND: "the operand",
    }
    fix = f"Fix at {at}: clone {what.get(site.kind, 'the value')} `{site.target}`: "
    if error_class == "inplace_version":
        return fix + (
            "the operation there works on its own copy, so the later in-place "
            "write no longer changes the tensor saved for backward."
        )
    return fix + (
        "the in-place write then modifies an ordinary tensor instead of a view "
        "whose changes autograd cannot track."
    )


def edits_of(sites: Sequence[Site]) -> list[Edit]:
    return [Edit(s.file, s.line, s.kind, s.code) for s in sites]
