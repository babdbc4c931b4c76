"""The result of a repair, as a value: what the CLI prints, maps to an exit code, or writes.

Explanations are written for someone who wants to learn why: which line saved the
tensor, which line changed it, and why the chosen edit makes backward see the values
it saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from autoclone.codemods.sites import (
    Site,
)
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


def edits_of(sites: Sequence[Site]) -> list[Edit]:
    return [Edit(s.file, s.line, s.fix, s.code, s.kind) for s in sites]
