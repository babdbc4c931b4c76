"""``autoclone explain``: one traced run, no search, the conflict in plain words.

It names what saved the tensor and why backward needs it, which line wrote into it and
when, and the edit the evidence points at, marked as not verified (``fix`` verifies).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from autoclone import fixes, network
from autoclone import report as rp
from autoclone.classify import DESCRIPTIONS, NOT_AUTOGRAD
from autoclone.codemods.sites import INPLACE, STATEMENT
from autoclone.diagnose import Diagnosis, diagnose, editor_lines, explain, warning_lines, where
from autoclone.fixes.base import RETAINED
from autoclone.report import first_run_outcome
from autoclone.session import BadInput, Options, Project, first_run, load_project, make_runner
from autoclone.trial import RunResult, Unsafe


@dataclass
class Explanation:
    """What one run showed; ``status`` uses the same words as a repair report."""

    status: str
    summary: str
    text: str = ""
    diagnosis: Diagnosis | None = None
    editor: list[str] = field(default_factory=list)
    runs: int = 0
    seconds: float = 0.0
    outside: list[dict[str, str]] = field(default_factory=list)  # see ``Report.outside``

    @property
    def exit_code(self) -> int:
        return 0 if self.status in ("explained", rp.NO_ERROR) else rp.EXIT_CODES[self.status]

    def as_json(self) -> dict[str, object]:
        d = self.diagnosis
        return {
            "status": self.status,
            "summary": self.summary,
            "explanation": self.text,
            "error": {"class": d.error_class, "message": d.line} if d else None,
            "saved": list(d.saved) if d and d.saved else None,
            "mutation": list(d.mutation) if d and d.mutation else None,
            "view": list(d.view) if d and d.view else None,
            "evidence": d.evidence if d else "",
            "diagnostics": self.editor,
            "runs": self.runs,
            "seconds": round(self.seconds, 3),
            "outside": self.outside,
        }


def explain_script(options: Options) -> Explanation:
    """Run the script once under the tracer and explain what went wrong."""
    started = time.monotonic()
    try:
        project = load_project(options)
        runner = make_runner(options, project)
    except BadInput as exc:
        return Explanation(rp.BAD_INPUT, str(exc))
    try:
        first = first_run(project, runner, options, options.progress)
    except Unsafe as exc:
        return Explanation(rp.BAD_INPUT, str(exc))
    finally:
        runner.close()
    outside = list(runner.outside.values())
    result = _explanation(first, project, options.timeout)
    words, editor = warning_lines(first.warnings, project.sources, project.lines)
    shrunk = project.plan.describe()
    sizes = f"(the script ran shrunk for speed: {shrunk})" if shrunk else ""
    cpu = (f"(no usable CUDA device here: the script's {first.cuda_mapped} CUDA calls ran on "
           "the CPU)") if first.cuda_mapped else ""  # fmt: skip
    notes = [f"note: {n}" for n in rp.outside_notes(outside, runner.mode())] if outside else []
    notes += [f"note: {n}" for n in network.notes(runner.hosts)]
    result.text = "\n".join(filter(None, [result.text, *words, sizes, cpu, *notes]))
    result.outside = rp.outside_entries(outside)
    result.editor += editor
    result.runs, result.seconds = runner.runs, time.monotonic() - started
    return result


def _explanation(first: RunResult, project: Project, timeout: float) -> Explanation:
    ended = first_run_outcome(first, timeout)
    if ended is not None:
        return Explanation(*ended)
    d = diagnose(first, project.sources)
    if d.error_class == NOT_AUTOGRAD:
        return Explanation(rp.NOT_AUTOGRAD, f"not an autograd error: {d.line}", diagnosis=d)
    text = explain(d, project.lines) + "\n" + _suggestion(d, project, first.backward)
    return Explanation("explained", d.line, text, d, editor_lines(d))


def _suggestion(d: Diagnosis, project: Project, before: int) -> str:
    """The edit ``fix`` would verify first, from the same kinds in the same order; or why
    none fits and what a person would do."""
    ctx = fixes.context(project, {"before": before})
    kinds = fixes.applicable(d, ctx)
    if not kinds:
        return f"{DESCRIPTIONS[d.error_class]}: no edit of autoclone's kinds repairs this class."
    options = fixes.candidates(kinds, d, ctx)
    if not options:
        reason, advice = fixes.refusal(kinds, d, ctx)
        return "\n".join(filter(None, [f"No edit suggested: {reason}.", advice]))
    kind, cand = options[0]
    lines = project.lines
    edits = "; ".join(
        f"`{s.code}` {'just before' if s.kind in (INPLACE, STATEMENT) else 'at'} "
        f"{where((s.file, s.after or s.line), lines)}"
        for s in cand.sites
    )
    checked = (
        " (fix first checks that no optimizer steps on gradients this leaves)"
        if kind.reference == RETAINED
        else ""
    )
    return f"Suggested edit (not verified; `autoclone fix` verifies it{checked}): {edits}."
