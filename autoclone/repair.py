"""``repair(options) -> Report``: the whole loop, from first run to verified patch.

1. run the script once under the autograd tracer (shrunk when a full-size run is slow)
   to learn the error, its class, the lines that saved and wrote, any carried state, and
   how many backward calls succeeded before it (n);
2. let the evidence pick the fix kind: out-of-place / inplace=False / clone for a write
   into a saved tensor, no_grad for a leaf update, detach / float() for a graph carried
   across iterations, retain_graph for two losses over one graph; an optimizer step
   between a forward pass and its backward is reported unfixable;
3. compute the reference numbers the correct program gives for n + K backward calls;
4. run the predicted edits as patched scripts, each judged against the reference, and
   fall back to ddmin over every clone site only if none passes;
5. only a patch whose own run passed reaches the user (at full size too, if shrunk).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import NamedTuple

from autoclone import classify as cls
from autoclone import report as rp
from autoclone.child import (
    FORWARD_REFERENCE,
    PLAIN,
    REFERENCE,
    RETAIN_REFERENCE,
)
from autoclone.codemods.render import instrument_edits, patch_edits
from autoclone.codemods.rewrites import inplace_false
from autoclone.codemods.sites import DETACH, NO_GRAD, RETAIN_GRAPH, STATEMENT, Site
from autoclone.diagnose import (
    Diagnosis,
    crosses_iterations,
    diagnose,
    explain,
    optimizer_before_backward,
    priority,
    warning_lines,
)
from autoclone.diagnose import as_json as diagnosis_json
from autoclone.kinds import (
    consequences,
    detach_candidates,
    no_grad_candidates,
    optimizer_advice,
    retain_candidates,
    same_loss_twice,
)
from autoclone.oracle import FINITE, FIRST_LOSS, FULL, RETAINED, Reference, judge
from autoclone.outcomes import Failed, Outcome, Passed, TimedOut
from autoclone.patch import PatchError, render_diff, render_diff_bytes
from autoclone.search import SearchResult, find_minimal, linear_elimination
from autoclone.session import (
    BadInput,
    Options,
    Project,
    first_run,
    jobs_for,
    load_project,
    make_runner,
)
from autoclone.shrink import Plan
from autoclone.trial import Runner, RunResult


class _Verified(NamedTuple):
    """A patched run that passed: the edits, the patched texts, and what the run computed."""

    sites: list[Site]
    patched: dict[str, str]
    run: RunResult


#: Predicted edits verified directly (each a patched run) before falling back to ddmin.
PREDICTIONS = 3


def repair(options: Options) -> rp.Report:
    """Repair the script; never raises for the user's input, returns the outcome."""
    started = time.monotonic()
    try:
        project = load_project(options)
        runner = make_runner(options, project)
    except BadInput as exc:
        return rp.Report(rp.BAD_INPUT, str(exc), seconds=time.monotonic() - started)
    try:
        report = _Repair(options, project, runner, started).run()
    finally:
        runner.close()
    if report.status == rp.UNFIXABLE and not report.summary.startswith(report.error_class):
        report.summary = f"{report.error_class}: {report.summary}"
    report.runs, report.candidates = runner.runs, len(project.sites)
    report.seconds = time.monotonic() - started
    return report


@dataclass
class _Repair:
    options: Options
    project: Project
    runner: Runner
    started: float
    _trial_seconds: float = 0.0  # how long the first run took: worth running trials at once?

    def say(self, message: str) -> None:
        self.options.progress(message)

    def run(self) -> rp.Report:
        first = first_run(self.project, self.runner, self.options, self.say)
        self._trial_seconds = first.seconds
        report = self._after_first(first)
        own, lines = self.project.sources, self.project.lines
        report.notes += warning_lines(first.warnings, own, lines)[0]
        return report

    def _after_first(self, first: RunResult) -> rp.Report:
        early = _first_run_verdict(first, self.options.timeout)
        if early is not None:
            return early
        found = diagnose(first, self.project.sources)
        if found.error_class == cls.NOT_AUTOGRAD:
            return _not_clone_fixable(found.error_class, found.line)
        if optimizer_before_backward(found):
            return self._unfixable_optimizer(first, found)
        if crosses_iterations(found):
            return self._other_kind(first, found, DETACH)
        if found.error_class == cls.LEAF_INPLACE:
            return self._other_kind(first, found, NO_GRAD)
        if found.error_class == cls.BACKWARD_TWICE and found.previous_backward is not None:
            return self._other_kind(first, found, RETAIN_GRAPH)
        if found.error_class not in cls.CLONE_FIXABLE:
            report = _not_clone_fixable(found.error_class, found.line)
            report.explanation = explain(found, self.project.lines)
            report.diagnosis = diagnosis_json(found)
            return report
        return self._fix(first, found)

    def _base(self, first: RunResult, found: Diagnosis) -> tuple[rp.Report, int]:
        limit = first.backward + self.options.steps
        steps = {"before_error": first.backward, "k": self.options.steps, "limit": limit}
        plan = self.project.plan
        base = rp.Report(rp.UNFIXABLE, "", error=found.line, error_class=found.error_class,
                         steps=steps, explanation=explain(found, self.project.lines),
                         diagnosis=diagnosis_json(found), shrunk=plan.as_json())  # fmt: skip
        if plan.knobs:
            base.notes.append(
                f"trials ran shrunk ({plan.describe()}); the patch is verified "
                f"against the reference at those sizes and for {self.options.steps} steps at "
                "yours"
            )
        self.say(f"{found.error_class}: {found.line}")
        return base, limit

    def _other_kind(self, first: RunResult, found: Diagnosis, kind: str) -> rp.Report:
        """A detach where a graph reaches across iterations; no_grad for a leaf update;
        retain_graph for two backward calls over one graph in one iteration. Only the
        edits the evidence points at are tried, each as a verified patched run."""
        base, limit = self._base(first, found)
        candidates = self._kind_candidates(found, kind)
        if not candidates:
            base.summary = self._no_candidates(found, kind)
            return base
        reference = self._kind_reference(found, kind, first.backward, limit)
        if isinstance(reference, str):
            base.summary = reference
            return base
        base.reference = reference.describe()
        verified = self._try_predictions(candidates[: PREDICTIONS + 1], reference, limit, {})
        if verified is None:
            base.summary = f"none of the {kind} edits the evidence points at passed verification"
            return base
        if kind == DETACH and any(s.after for s in verified.sites):
            verified = self._smaller_equivalent(base, verified, candidates, limit)
        chosen = verified.sites
        report = self._fixed(base, found, chosen, verified.patched, minimal=len(chosen) == 1)
        report.notes += consequences(found, chosen, self.project.lines)
        return report

    def _smaller_equivalent(
        self, base: rp.Report, cut: _Verified, candidates: list[list[Site]], limit: int
    ) -> _Verified:
        """A detach right after the backward call cuts the graph exactly where backward
        used it, and so defines what the patched program must compute. A cut at the read
        that changes fewer lines is taken only if its losses and gradients are the same
        (it is not, for instance, between the micro-steps of gradient accumulation)."""
        most = _lines(cut.sites)
        smaller = [c for c in candidates if not any(s.after for s in c) and _lines(c) < most][:2]
        if not smaller:
            return cut
        same = Reference(FULL, cut.run.losses, cut.run.grads, cut.run.backward)
        verified = self._try_predictions(smaller, same, limit, {})
        if verified is None:
            return cut
        base.notes.append(
            "the shorter edit was checked to compute the same losses and gradients as "
            "detaching right after the backward call"
        )
        return verified

    def _no_candidates(self, found: Diagnosis, kind: str) -> str:
        """Why the evidence supports no edit of this kind, in the user's terms."""
        if kind != RETAIN_GRAPH:
            return f"no {kind} edit is supported by the evidence for this error"
        if same_loss_twice(found, self.project.lines):
            return (
                "the same loss is backpropagated twice in one iteration; if the gradient "
                "should count twice pass retain_graph=True to the first call, but usually "
                "the second call is a slip to remove"
            )
        return _not_clone_fixable(found.error_class, found.line).summary

    def _kind_candidates(self, found: Diagnosis, kind: str) -> list[list[Site]]:
        texts = {rel: src.text for rel, src in self.project.sources.items()}
        if kind == DETACH:
            return detach_candidates(found, self.project.sites, texts)
        if kind == RETAIN_GRAPH:
            return retain_candidates(found, self.project.lines)
        return no_grad_candidates(found, self.project.sites, texts)

    def _kind_reference(self, found: Diagnosis, kind: str, before: int, limit: int
                        ) -> Reference | str:  # fmt: skip
        """What the kind's patch must reproduce (nothing external for a detach: it changes
        what is differentiated; the retained-graph run for retain_graph), or why not."""
        if kind == DETACH:
            return Reference(FINITE, (), (), limit)
        if kind != RETAIN_GRAPH:
            reference = self._reference(found.error_class, before, limit)
            return reference or "could not compute reference numbers for the correct program"
        self.say("computing reference numbers (no backward call frees its graph)")
        ref = self.runner.run(self.project.spec(mode=RETAIN_REFERENCE, limit=limit))
        if ref.status in ("completed", "stopped"):
            return Reference(RETAINED, ref.losses, ref.grads, ref.backward)
        failure = ref.error.line if ref.error else ref.status
        error_class = cls.classify(failure)
        what = failure[:200] if error_class == cls.NOT_AUTOGRAD else cls.DESCRIPTIONS[error_class]
        return (
            "retain_graph=True would only delay the error: with no graph freed, the script "
            f"still fails ({what}); something between the two backward calls (an optimizer "
            "step?) changes what the graph saved, which is a choice about training that "
            "autoclone leaves to you"
        )

    def _unfixable_optimizer(self, first: RunResult, found: Diagnosis) -> rp.Report:
        base, _ = self._base(first, found)
        base.summary = (
            "an optimizer step changed weights that a graph of the same iteration still "
            "needed for backward; no single edit makes this correct"
        )
        base.explanation += "\n" + optimizer_advice(found, self.project.lines)
        return base

    def _fix(self, first: RunResult, found: Diagnosis) -> rp.Report:
        base, limit = self._base(first, found)
        reference = self._reference(found.error_class, first.backward, limit)
        if reference is None:
            base.summary = "could not compute reference numbers for the correct program"
            return base
        base.reference = reference.describe()
        guided = self.options.strategy == "predict"
        ranked = priority(found, self.project.sites) if guided else []
        known: dict[frozenset[str], Outcome] = {frozenset(): Failed("original", found.line)}
        by_id = {s.id: s for s in self.project.sites}
        predicted = self._module_flags(found) + [[by_id[i]] for i in ranked[:PREDICTIONS]]
        verified = self._try_predictions(predicted, reference, limit, known)
        if verified is not None:
            return self._fixed(base, found, verified.sites, verified.patched, minimal=True)
        result = self._search(reference, limit, ranked, known, found.error_class)
        return self._finish(base, found, result, reference, limit)

    def _module_flags(self, found: Diagnosis) -> list[list[Site]]:
        """``inplace=False`` where the library module that wrote in place was built, or in
        the call that wrote (``F.relu(h, inplace=True)``): what people write."""
        if self.options.strategy != "predict":
            return []
        flags = []
        for frame in dict.fromkeys(f for f in (found.module_built, found.mutation) if f):
            file, line = frame
            text = self.project.lines.get(file, [])
            if 0 < line <= len(text):
                flags += [[s] for s in inplace_false(file, line, text[line - 1])]
        return flags

    def _reference(self, kind: str, before: int, limit: int) -> Reference | None:
        if kind == cls.INPLACE_VERSION:
            self.say("computing reference numbers (allow_mutation_on_saved_tensors)")
            ref = self.runner.run(self.project.spec(mode=REFERENCE, limit=limit))
            if ref.status in ("completed", "stopped"):
                return Reference(FULL, ref.losses, ref.grads, ref.backward)
        self.say("computing reference numbers (forward values with grad disabled)")
        ref = self.runner.run(self.project.spec(mode=FORWARD_REFERENCE, limit=before))
        if ref.status == "stopped" and len(ref.losses) == before + 1:
            return Reference(FIRST_LOSS, ref.losses, ref.grads, limit)
        if ref.status == "completed" and len(ref.losses) == before:
            return Reference(FIRST_LOSS, ref.losses, ref.grads, before)  # no backward after it
        return None

    def _verify(
        self, sites: list[Site], reference: Reference, limit: int
    ) -> tuple[Outcome, _Verified]:
        """Run the plain patched script: the only kind of run that can approve a patch."""
        patched = self.project.render(sites, patch_edits)
        run = self.runner.run(self.project.spec(patched, limit=limit))
        return judge(run, reference), _Verified(sites, patched, run)

    def _try_predictions(
        self,
        candidates: list[list[Site]],
        reference: Reference,
        limit: int,
        known: dict[frozenset[str], Outcome],
    ) -> _Verified | None:
        """The edits the evidence points at, each set verified directly as a patched run."""
        for edit_set in candidates:
            shown = ", ".join(f"`{s.code}` at {s.file}:{s.line}" for s in edit_set)
            self.say(f"run {self.runner.runs + 1}: trying {shown}")
            outcome, verified = self._verify(edit_set, reference, limit)
            self.say(f"  -> {_outcome_text(outcome)}")
            known[frozenset(s.id for s in edit_set)] = outcome
            if isinstance(outcome, Passed):
                return verified
        return None

    def _search(
        self,
        reference: Reference,
        limit: int,
        ranked: list[str],
        known: dict[frozenset[str], Outcome],
        original: str,
    ) -> SearchResult:
        instrumented = self.project.render(self.project.sites, instrument_edits)
        base = self.project.spec(instrumented, mode=PLAIN, limit=limit)

        def test(config: frozenset[str]) -> Outcome:
            self.say(f"run {self.runner.runs + 1}: {len(config)} clone(s) enabled")
            outcome = judge(self.runner.run(replace(base, sites=config)), reference)
            self.say(f"  -> {_outcome_text(outcome)}")
            return outcome

        deadline = self.started + self.options.budget
        ids = [s.id for s in self.project.sites]
        if self.options.strategy == "linear":
            self.say(f"stripping clones one by one from {len(ids)} candidate sites")
            return linear_elimination(
                ids, test, known=known, stop=lambda: time.monotonic() > deadline
            )
        self.say(f"searching {len(ids)} candidate sites with ddmin")
        return find_minimal(
            ids,
            test,
            priority=ranked,
            known=known,
            stop=lambda: time.monotonic() > deadline,
            max_priority=0,
            fixed_but_wrong=lambda outcome: _error_gone(outcome, original),
            jobs=jobs_for(self.options, self._trial_seconds),
        )

    def _finish(
        self,
        base: rp.Report,
        found: Diagnosis,
        result: SearchResult,
        reference: Reference,
        limit: int,
    ) -> rp.Report:
        if result.best is None:
            base.summary = _no_fix_reason(result, len(self.project.sites))
            return base
        chosen = [s for s in self.project.sites if s.id in result.best]
        self.say("verifying the patched script")
        verdict, verified = self._verify(chosen, reference, limit)
        if not isinstance(verdict, Passed):
            base.summary = f"the patched script failed verification: {_outcome_text(verdict)}"
            return base
        return self._fixed(
            base, found, chosen, verified.patched, minimal=result.minimal, stopped=result.stopped
        )

    def _fixed(
        self,
        base: rp.Report,
        found: Diagnosis,
        chosen: list[Site],
        patched: dict[str, str],
        *,
        minimal: bool,
        stopped: bool = False,
    ) -> rp.Report:
        unsafe = self._at_full_size(patched)
        if unsafe is not None:
            base.summary = unsafe
            return base
        sources = self.project.sources
        changes = [
            (sources[rel], patch_edits([s for s in chosen if s.file == rel])) for rel in patched
        ]
        base.status, base.minimal = rp.FIXED, minimal
        try:
            base.patch_bytes = render_diff_bytes(changes, relative_to=self.options.cwd)
        except PatchError as exc:
            base.summary = f"the verified patch cannot be written: {exc}"
            return base
        base.patch = render_diff(changes, relative_to=self.options.cwd)
        base.edits = rp.edits_of(chosen)
        base.changes = [(sources[rel], text) for rel, text in patched.items()]
        lines = self.project.lines
        base.explanation += "\n" + "\n".join(rp.why(s, found, lines) for s in chosen)
        kinds = ", ".join(dict.fromkeys(s.fix for s in chosen))
        n = len(chosen)
        base.summary = (
            f"fixed with {n} edit{'s' if n > 1 else ''} ({kinds}), verified by a run of the "
            "patched script"
        )
        if stopped:
            base.notes.append("time budget reached: the patch is verified but may not be minimal")
        return base


    def _at_full_size(self, patched: dict[str, str]) -> str | None:
        """Trials ran shrunk: the patch must also run K steps at the user's own sizes.
        Returns why not, or None when it did (or when nothing was shrunk)."""
        if not self.project.plan.knobs:
            return None
        steps = self.options.steps
        self.say(f"run {self.runner.runs + 1}: the patched script at full size, {steps} steps")
        spec = self.project.spec(patched, plan=Plan(), limit=steps)
        outcome = judge(self.runner.run(spec), Reference(FINITE, (), (), steps))
        self.say(f"  -> {_outcome_text(outcome)}")
        if isinstance(outcome, Passed):
            return None
        return (
            "the patch passed at shrunk sizes but not at yours "
            f"({_outcome_text(outcome)}); rerun with --no-shrink"
        )


def first_run_outcome(first: RunResult, timeout: float) -> tuple[str, str] | None:
    """``(status, summary)`` when the first run ended without an error to work on: the
    same words for ``fix`` and ``explain``."""
    if first.status == "timeout":
        return (
            rp.TIMEOUT,
            f"the script neither failed nor finished within {timeout:g} s "
            "(use --timeout to allow longer runs)",
        )
    if first.status in ("completed", "stopped"):
        return rp.NO_ERROR, "the script ran to its end without an error: nothing to fix"
    if first.status == "crash":
        return (
            rp.NOT_AUTOGRAD,
            "the script crashed without a Python error "
            f"(last output: {first.stderr.strip()[-200:]!r})",
        )
    return None


def _first_run_verdict(first: RunResult, timeout: float) -> rp.Report | None:
    outcome = first_run_outcome(first, timeout)
    return rp.Report(*outcome) if outcome else None


def _not_clone_fixable(kind: str, line: str) -> rp.Report:
    if kind == cls.NOT_AUTOGRAD:
        return rp.Report(
            rp.NOT_AUTOGRAD, f"not an autograd error: {line}", error=line, error_class=kind
        )
    why = {
        cls.NO_GRAPH: "the loss does not depend on anything that requires grad through "
        "differentiable operations",
        cls.BACKWARD_TWICE: "two backward calls ran through one graph without a carried "
        "state to detach; summing the losses or retain_graph=True is a choice about what "
        "to train, which autoclone leaves to you",
    }.get(kind, "no edit the evidence supports repairs it")
    return rp.Report(
        rp.UNFIXABLE, f"{kind}: {cls.DESCRIPTIONS[kind]}; {why}", error=line, error_class=kind
    )


def _lines(sites: list[Site]) -> int:
    """Lines a set of edits changes: an inserted statement is a line of its own."""
    inserted = sum(1 for s in sites if s.kind == STATEMENT)
    return inserted + len({(s.file, s.line) for s in sites if s.kind != STATEMENT})


def _error_gone(outcome: Outcome, original: str) -> bool:
    """The original error went away, but some clones broke something else (the numbers,
    or a clone turned a parameter into a non-leaf): the set holds a fixer and breakers."""
    return isinstance(outcome, Failed) and outcome.kind not in (original, "crash", "steps")


def _outcome_text(outcome: Outcome) -> str:
    if isinstance(outcome, Passed):
        return "passed"
    if isinstance(outcome, TimedOut):
        return f"timed out after {outcome.seconds:.1f} s"
    return f"{outcome.kind}: {outcome.message}"


def _no_fix_reason(found: SearchResult, candidates: int) -> str:
    if found.stopped:
        return "the time budget ran out before any set of clones passed"
    full = next((o for c, o in found.history if len(c) == candidates), None)
    why = f" (with every clone enabled: {_outcome_text(full)})" if full is not None else ""
    return (
        f"no set of the {candidates} candidate clones removes the error and keeps the numbers{why}"
    )
