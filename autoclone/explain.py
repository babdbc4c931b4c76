"""``autoclone explain``: one traced run, no search, the conflict in plain words.

It names what saved the tensor and why backward needs it, which line wrote into it and
when, and the edit the evidence points at, marked as not verified (``fix`` verifies).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from autoclone import report as rp
from autoclone.classify import CLONE_FIXABLE, DESCRIPTIONS, NOT_AUTOGRAD
from autoclone.codemods.sites import INPLACE
from autoclone.diagnose import (
    Diagnosis,
    diagnose,
    editor_lines,
    explain,
    priority,
    warning_lines,
    where,
)
from autoclone.repair import first_run_outcome
from autoclone.session import BadInput, Options, Project, first_run, load_project, make_runner
from autoclone.trial import RunResult


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
    finally:
        runner.close()
    result = _explanation(first, project, options.timeout)
    words, editor = warning_lines(first.warnings, project.sources, project.lines)
    shrunk = project.plan.describe()
    sizes = f"(the script ran shrunk for speed: {shrunk})" if shrunk else ""
    result.text = "\n".join(filter(None, [result.text, *words, sizes]))
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
    lines = project.lines
    text = explain(d, lines)
    ranked = [s for s in project.sites if s.id in priority(d, project.sites)[:1]]
    if d.error_class in CLONE_FIXABLE and ranked:
        site = ranked[0]
        how = "just before" if site.kind == INPLACE else "at"
        text += (
            f"\nSuggested edit (not verified; `autoclone fix` verifies it): `{site.code}` {how} "
            f"{where((site.file, site.line), lines)}."
        )
    elif d.error_class not in CLONE_FIXABLE:
        text += f"\n{DESCRIPTIONS[d.error_class]}: a .clone() does not repair this class."
    return Explanation("explained", d.line, text, d, editor_lines(d))
