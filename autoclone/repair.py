"""``repair(options) -> Report``: the whole loop, from first run to verified patch.

1. run the script once under the autograd tracer (shrunk when a full-size run is slow)
   to learn the error, its class, the lines that saved and wrote, any carried state, and
   how many backward calls succeeded before it (n);
2. ask the fix kinds (``autoclone.fixes``, one module each) which of them the evidence
   supports; the first sets the reference the patch must reproduce, computed once for
   n + K backward calls (the run under ``allow_mutation_on_saved_tensors``, the forward
   values with grad off, the run in which no backward frees its graph, or none for a
   detach);
3. verify their candidate edits, best first, each as a run of the patched script; an edit
   that gets the run further (the conflict gone, another met) is kept, the new failure
   is diagnosed by a traced run, and the next round predicts its edit, for as many
   conflicts as the script has (bounded); the set that passes is made 1-minimal;
4. fall back to ddmin over every switchable site where the kinds allow it;
5. only a patch whose own run passed reaches the user (at full size too, if shrunk).

The rounds' records and the tests that steer them are in ``autoclone.rounds``, the
mapping of patched lines to original ones in ``autoclone.line_map``, and the repair's
sentences in ``autoclone.repair_text``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from autoclone import classify as cls
from autoclone import fixes, needed, network, references, score_weights
from autoclone import report as rp
from autoclone.child import (
    LOCATE,
    PLAIN,
)
from autoclone.codemods.render import instrument_edits, patch_edits
from autoclone.codemods.sites import CLONE, Site
from autoclone.diagnose import (
    Diagnosis,
    Frame,
    diagnose,
    explain,
    priority,
    relabel,
    warning_lines,
)
from autoclone.diagnose import as_json as diagnosis_json
from autoclone.fixes.base import SAME_NUMBERS, Candidate, Context, FixKind
from autoclone.labels import labels_beyond, new_label_gradients
from autoclone.line_map import _edited_lines, _line_map
from autoclone.oracle import FINITE, FULL, Reference, judge
from autoclone.outcomes import Failed, Outcome, Passed
from autoclone.patch import PatchError, render_diff, render_diff_bytes
from autoclone.repair_text import _no_fix_reason, _outcome_text, _reasons
from autoclone.rounds import (
    _broke_itself,
    _cuts_nothing,
    _error_gone,
    _failing_frame,
    _Goal,
    _got_further,
    _lines,
    _moved_on,
    _not_tensors,
    _on_non_tensor,
    _Part,
    _Point,
    _rebased,
    _tries,
    _Verified,
)
from autoclone.rounds import _shape as _shape  # tests import it from here
from autoclone.search import SearchResult, find_minimal, linear_elimination
from autoclone.session import (
    BadInput,
    Options,
    Project,
    first_run,
    jobs_for,
    load_project,
    make_runner,
    outer_advice,
)
from autoclone.trial import Runner, RunResult, Unsafe


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
    except Unsafe as exc:
        report = rp.Report(rp.BAD_INPUT, str(exc))
    finally:
        runner.close()
    if runner.outside:
        outside = list(runner.outside.values())
        report.outside = rp.outside_entries(outside)
        report.notes += rp.outside_notes(outside, runner.mode())
    if "--allow-network" not in report.summary:  # said once, where the run failed for it
        report.notes += network.notes(runner.hosts)
    if report.status == rp.UNFIXABLE and not report.summary.startswith(report.error_class):
        report.summary = f"{report.error_class}: {report.summary}"
    report.runs, report.candidates = runner.runs, len(project.sites)
    report.seconds = time.monotonic() - started
    return report


#: Conflicts one repair follows, each diagnosed by a traced run of the script patched so far.
MAX_ROUNDS = 6
#: Predicted edit sets verified at most, over all conflicts, before ddmin takes over.
MAX_TRIES = 24

#: A verification run goes on at least this long past its limit, to meet a later conflict.
RUN_ON = 1.0


@dataclass
class _Repair:
    options: Options
    project: Project
    runner: Runner
    started: float
    _trial_seconds: float = 0.0  # how long the first run took: worth running trials at once?
    _trial_mb: float = 0.0  # the first run's peak memory: how many trials fit at once
    _run_on: float = 0.0  # seconds a verification run goes on past its limit (``RunSpec``)
    _traced: Reference | None = None  # the numbers the first run computed past its conflict
    _known: dict[frozenset[str], Outcome] = field(default_factory=dict)
    _predicted: int = 0  # predicted edit sets verified so far
    _promising: list[str] = field(default_factory=list)  # edits that got a run further
    _labels: tuple[Frame, ...] = ()  # where the original's losses took labels needing grad
    _reached: frozenset[Frame] | None = None  # the lines the original run executed
    _label_leaks: list[str] = field(default_factory=list)  # refusals for that: evidence
    _restart: bool = False  # evidence that changes the candidates came in: explore again
    _beyond: str = ""  # the summary when a verified edit got past a conflict to one unrepaired
    _aliases: Reference | None | bool = False  # the inplace-off numbers, once asked for
    _aliased: set[frozenset[str]] = field(default_factory=set)  # edit sets they passed
    #: Verification runs by the patched texts they ran: two edit sets that render the same
    #: script (``ALPHA.detach()`` at either read of one line) are one run, judged anew
    _runs: dict[tuple[Any, ...], RunResult] = field(default_factory=dict)
    _not_tensors: set[str] = field(default_factory=set)  # see ``rounds._not_tensors``
    _references: dict[tuple[str, frozenset[str]], Reference | str] = field(
        default_factory=dict)  # ``_rebuilt``'s, by the edits they were computed with

    def say(self, message: str) -> None:
        self.options.progress(message)

    def run(self) -> rp.Report:
        first = first_run(self.project, self.runner, self.options, self.say, past_conflict=True)
        first, self._traced = references.past_conflict(first, self.options.steps)
        self._trial_seconds, self._trial_mb = first.seconds, first.peak_mb
        self._run_on = min(max(RUN_ON, 2 * first.script_seconds), self.options.timeout / 3)
        report = self._after_first(first)
        own, lines = self.project.sources, self.project.lines
        report.notes += warning_lines(first.warnings, own, lines)[0]
        return report

    def _context(self, evidence: dict[str, Any]) -> Context:
        return fixes.context(self.project, evidence)

    def _after_first(self, first: RunResult) -> rp.Report:
        early = rp.first_run_verdict(first, self.options.timeout)
        if early is not None:
            return early
        found = diagnose(first, self.project.sources)
        self._labels = first.label_grads
        self._reached = (first.past or first).executed
        if found.error_class == cls.NOT_AUTOGRAD:
            return rp.not_clone_fixable(found.error_class, found.line)
        outside = outer_advice([found.mutation, found.view, found.saved], self.options)
        if outside and any(f and f[0] in self.project.outer for f in (found.mutation, found.view)):
            base = self._base(first, found)[0]  # no edit can go there: no search either
            base.summary = f"{found.error_class}: {outside}"
            return base
        done = first.backward  # the backward calls it completed, and their numbers
        seen = {"before": done, "completed": (first.losses[:done], first.grads[:done]),
                "reached": first.reached, "call_reach": first.call_reach}  # fmt: skip
        kinds = fixes.applicable(found, self._context(seen))
        base, limit = self._base(first, found)
        if not kinds:
            report = rp.not_clone_fixable(found.error_class, found.line)
            report.explanation, report.diagnosis = base.explanation, base.diagnosis
            return report
        reference, evidence = references.compute(
            kinds[0].reference, found, (first.backward, limit), self.project, self.runner,
            self.say, traced=self._traced, in_backward=first.failed_in_backward,
            forward=_forward_of(first, found),
        )  # fmt: skip
        if isinstance(reference, str):
            base.summary = reference
            return base
        base.reference = reference.describe()
        ctx = self._context({**seen, **evidence, "label_leaks": self._label_leaks})
        start = _Point(found, first.error.line if first.error else found.line, first.backward,
                       _failing_frame(first, lambda frame: frame), first.executed)
        report = self._repair(base, start, kinds, reference, limit, ctx)
        scored = score_weights.refused(first.score_weights)
        if report.status == rp.UNFIXABLE and scored:  # the program's own wrong gradient first
            report.summary = f"{found.error_class}: {scored}; {report.summary}"
        return report

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

    # -- the rounds ----------------------------------------------------------------------
    def _repair(
        self,
        base: rp.Report,
        start: _Point,
        kinds: list[FixKind],
        reference: Reference,
        limit: int,
        ctx: Context,
    ) -> rp.Report:
        """Predict and verify, conflict after conflict (``_explore``); then ddmin over
        every switchable site if the kinds allow it; else say why nothing fits."""
        searchable = any(k.name == CLONE for k in kinds)
        goal = _Goal(kinds, reference, limit, ctx, {kinds[0].reference: reference})
        if self.options.strategy == "predict" or not searchable:
            leaks = len(self._label_leaks)
            verified = self._explore(start, [], goal)
            if verified is None and len(self._label_leaks) > leaks:  # new evidence, new edits
                self._restart = False
                verified = self._explore(start, [], goal)
            if verified is not None:
                options = fixes.candidates(kinds, start.found, ctx)
                return self._verified(base, verified, options, reference, limit, ctx)
        if searchable and not self._out_of_time():
            leaks = len(self._label_leaks)
            report = self._search(base, start.found, reference, limit)
            if report.status == rp.FIXED or len(self._label_leaks) == leaks:
                return report
            self._restart = False
            verified = self._explore(start, [], goal)  # edits the search's evidence allows
            if verified is None:
                return report
            options = fixes.candidates(kinds, start.found, ctx)
            return self._verified(base, verified, options, reference, limit, ctx)
        reason, advice = fixes.refusal(kinds, start.found, ctx)
        base.summary = self._beyond or reason or (
            "none of the edits the evidence points at passed verification")
        if advice:
            base.explanation += "\n" + advice
        return base

    def _explore(self, point: _Point, kept: list[_Part], goal: _Goal) -> _Verified | None:
        """Each predicted edit on top of the edits kept so far, as a verified run: one that
        passes ends the repair; one that gets further (the conflict gone, another met) is
        kept, the patched script is traced, and the next conflict explored, depth first,
        backing out of a path that leads nowhere."""
        options = fixes.candidates(goal.kinds, point.found, goal.ctx)
        before = [s for part in kept for s in part.sites]
        budget = _tries(options)
        for kind, cand in options:
            if self._restart:  # new evidence: the kinds' candidates from the top again
                return None
            if budget <= 0:
                break
            budget -= 1
            sites = [*before, *cand.sites]
            if self._failed_before(sites) or self._out_of_time() or self._predicted >= MAX_TRIES:
                continue
            if _on_non_tensor(cand, self._not_tensors):
                budget += 1
                continue
            if self._ran_before(sites, goal.limit):  # judged again, but not a try
                budget += 1
            else:
                self._predicted += 1
            judges = [*(p.kind for p in kept), kind]
            rebuilds = getattr(kind, "rebuilds_earlier", None)
            refs = self._rebuilt(kept, cand.sites, goal) if rebuilds and rebuilds(
                point.found) else goal.refs  # fmt: skip
            if refs is None:
                continue
            outcome, verified = self._verify(
                sites, goal.reference, goal.limit, judges, goal.ctx, refs
            )
            part = _Part(kind, point.found, cand.sites, point.executed, point.backward)
            if isinstance(outcome, Passed):
                return verified._replace(parts=[*kept, part], refs=refs)
            at = _failing_frame(verified.run, self._original_lines(verified))
            if _broke_itself(outcome, at, cand):  # ``total.detach()`` of a float: not a try
                self._not_tensors |= _not_tensors(outcome, cand)
                budget += 1
                continue
            moved = at not in (point.found.failing, point.frame)
            further = _got_further(outcome, verified.run, point, moved, _cuts_nothing(kind, cand))
            if len(kept) + 1 >= MAX_ROUNDS or not further:
                continue
            found = self._next_conflict(verified, point, goal)
            if found is None:
                self._note_beyond(point, verified, tried=False)
            else:
                nxt, deeper = found
                self._promising += [s.id for s in cand.sites]
                self.say(f"conflict {len(kept) + 2}: {nxt.found.line}")
                done = self._explore(nxt, [*kept, part], deeper)
                if done is not None:
                    return done
                self._note_beyond(point, verified, tried=True)
        return None

    def _rebuilt(
        self, kept: list[_Part], newest: Sequence[Site], goal: _Goal
    ) -> Mapping[str, Reference] | None:
        """The references of the conflicts before, computed again on the script with every
        other edit in (``references.recomputed``)."""
        return references.recomputed(
            [(p.kind.reference, p.found, p.backward, p.sites) for p in kept], newest,
            goal.limit, goal.refs, self.project, self.runner, self.say, self._references,
        )  # fmt: skip

    def _next_conflict(
        self, verified: _Verified, point: _Point, goal: _Goal
    ) -> tuple[_Point, _Goal] | None:
        """Run the patched script under the tracer: a new conflict some kind can repair is
        the next round's, judged by the reference its kind asks for (computed on the
        script as patched so far where the path has not met it yet); anything else ends
        the rounds."""
        self.say(f"run {self.runner.runs + 1}: tracing the patched script")
        spec = self.project.spec(verified.patched, mode=LOCATE, limit=goal.limit,
                                 run_on=self._run_on)  # fmt: skip
        traced = self.runner.run(spec)
        if traced.error is None:
            return None
        # the traced lines are the patched files' lines: read them there, then move them
        texts = {rel: replace(src, text=verified.patched.get(rel, src.text))
                 for rel, src in self.project.sources.items()}  # fmt: skip
        move = self._original_lines(verified)  # a line map per patched file: made once
        found = relabel(diagnose(traced, texts), move)
        self._labels = labels_beyond(self._labels, map(move, traced.label_grads), self._reached)
        kinds = fixes.applicable(found, goal.ctx)
        if not kinds or not _moved_on(found, traced, point):
            return None
        # the reference reaches K calls past this conflict, met past the earlier limit (a
        # run goes on past it): one computed to that limit only ends before the conflict
        limit = max(goal.limit, traced.backward + self.options.steps)
        deeper = self._with_reference(replace(goal, limit=limit), kinds[0].reference, found,
                                      traced, verified)  # fmt: skip
        if deeper is None:
            return None
        # the optimizers this conflict's calls reached, the failing one's too, as traced here
        # a conflict cured by a cut: the earlier edits' judges let it take optimizers out
        # of a call (``oracle.compare``)
        # the calls a cut at this conflict must leave alone are those the patched script
        # completed: an earlier edit may have changed the original's on purpose (a detached
        # advantage no longer trains the critic through the actor's loss)
        done = traced.backward
        ctx = self._context({**deeper.ctx.evidence, "call_reach": traced.call_reach,
                             "cut": kinds[0].reference != SAME_NUMBERS, "before": done,
                             "completed": (traced.losses[:done], traced.grads[:done])})  # fmt: skip
        deeper = replace(deeper, kinds=kinds, ctx=ctx)
        ran = None if traced.executed is None else frozenset(map(move, traced.executed))
        return _Point(found, traced.error.line if traced.error else "", traced.backward,
                      _failing_frame(traced, move), ran), deeper

    def _note_beyond(self, point: _Point, verified: _Verified, tried: bool) -> None:
        """The first path that got past a conflict to an error no round repaired (no kind
        took it up, or none of the edits ``tried`` passed): what an unfixable report says
        instead of the first conflict's refusal."""
        line = verified.run.error.line if verified.run.error else ""
        kind = cls.classify(line)
        if self._beyond or kind == cls.NOT_AUTOGRAD:
            return
        edits = ", ".join(f"`{s.code}` at {s.file}:{s.line}" for s in verified.sites)
        then = (f"{kind}: {cls.DESCRIPTIONS[kind]}; none of the edits tried for it passed"
                if tried else rp.not_clone_fixable(kind, line).summary)  # fmt: skip
        self._beyond = (f"{point.found.error_class} is repaired by {edits} (verified to get "
                        f"past it), and the script then fails: {then}")  # fmt: skip

    def _with_reference(
        self, goal: _Goal, which: str, found: Diagnosis, traced: RunResult, verified: _Verified
    ) -> _Goal | None:
        """The goal with the reference ``which`` in it: the path's own if it met one, else
        computed on the patched script (the numbers of the program its edits made)."""
        if which in goal.refs:
            return goal
        ref, evidence = references.compute(
            which, found, (traced.backward, goal.limit), self.project, self.runner, self.say,
            files=verified.patched, in_backward=traced.failed_in_backward,
        )  # fmt: skip
        if isinstance(ref, str):
            return None
        ctx = self._context({**goal.ctx.evidence, **evidence})  # leaks of the patched script
        return replace(goal, refs={**goal.refs, which: ref}, ctx=ctx)

    def _original_lines(self, verified: _Verified) -> Callable[[Frame], Frame]:
        """Lines of the patched files (a run's frames) as lines of the originals (the
        sites'): an inserted line is read as the original line it was inserted before."""
        maps = {rel: _line_map(self.project.sources[rel].text, text)
                for rel, text in verified.patched.items()}  # fmt: skip

        def move(frame: Frame) -> Frame:
            lines = maps.get(frame[0])
            if lines is None or not 0 < frame[1] <= len(lines):
                return frame
            return (frame[0], lines[frame[1] - 1])

        return move

    def _run_key(self, patched: Mapping[str, str], limit: int) -> tuple[Any, ...]:
        return (tuple(sorted(patched.items())), limit, self._run_on)

    def _ran_before(self, sites: list[Site], limit: int) -> bool:
        """The edits render a script an earlier verification run ran."""
        return self._run_key(self.project.render(sites, patch_edits), limit) in self._runs

    def _failed_before(self, sites: list[Site]) -> bool:
        known = self._known.get(frozenset(s.id for s in sites))
        return known is not None and not isinstance(known, Passed)

    def _out_of_time(self) -> bool:
        return time.monotonic() > self.started + self.options.budget

    def _verify(
        self,
        sites: list[Site],
        reference: Reference,
        limit: int,
        kinds: Sequence[FixKind] = (),
        ctx: Context | None = None,
        refs: Mapping[str, Reference] | None = None,
    ) -> tuple[Outcome, _Verified]:
        """Run the plain patched script: the only kind of run that can approve a patch.
        Every kind that contributed an edit judges it, against the reference it asks for
        (``refs``, else ``reference``): the strictest verdict stands."""
        shown = ", ".join(f"`{s.code}` at {s.file}:{s.line}" for s in sites)
        patched = self.project.render(sites, patch_edits)
        key = self._run_key(patched, limit)
        run = self._runs.get(key)
        if run is None:
            self.say(f"run {self.runner.runs + 1}: trying {shown}")
            spec = self.project.spec(patched, limit=limit, run_on=self._run_on)
            run = self._runs[key] = self.runner.run(spec)
        else:
            self.say(f"trying {shown}: the script an earlier run ran, judged again")
        run = run.within(limit, lambda: _edited_lines(self.project.sources, patched))
        refs = refs or {}
        last = kinds[-1] if kinds else None
        verdicts = [
            self._judged(k, run, _rebased(refs.get(k.reference, reference), k, last, ctx), ctx,
                         sites) for k in dict.fromkeys(kinds)
        ] if ctx else []  # fmt: skip
        failed = [v for v in verdicts if not isinstance(v, Passed)]
        outcome: Outcome = (failed or verdicts or [judge(run, reference)])[0]
        verified = _Verified(sites, patched, run)
        if isinstance(outcome, Passed):
            outcome = self._labels_kept(run, self._original_lines(verified))
        self._known[frozenset(s.id for s in sites)] = outcome
        self.say(f"  -> {_outcome_text(outcome)}")
        return outcome, verified

    def _judged(self, kind: FixKind, run: RunResult, reference: Reference, ctx: Context,
                sites: list[Site]) -> Outcome:  # fmt: skip
        """The kind's verdict; for a kind with ``alias_reference`` whose numbers differ, the
        verdict of the program with every in-place flag off (computed once, when first
        needed): the write-allowed run keeps an alias the in-place write made."""
        verdict = kind.judge(run, reference, ctx)
        if not (isinstance(verdict, Failed) and verdict.kind == "numbers"
                and getattr(kind, "alias_reference", False)):  # fmt: skip
            return verdict
        if self._aliases is False:
            self._aliases = references.inplace_off(reference.steps, self.project, self.runner,
                                                   self.say)  # fmt: skip
        aliases = self._aliases if isinstance(self._aliases, Reference) else None
        if aliases is None or not isinstance(judge(run, aliases), Passed):
            return verdict
        self._aliased.add(frozenset(s.id for s in sites))
        return Passed()

    def _labels_kept(self, run: RunResult, move: Callable[[Frame], Frame]) -> Outcome:
        """A passing run that lets gradient reach a loss's labels where the original did
        not fails after all (``autoclone.labels``), and so does one that weights a
        log-probability with a graph (``autoclone.score_weights``)."""
        why = new_label_gradients(map(move, run.label_grads), self._labels)
        if why is None:
            scored = score_weights.refused(map(move, run.score_weights))
            return Failed("labels", scored) if scored else Passed()
        self._label_leaks.append(why)  # the evidence ``detach_view`` waits for
        self._restart = True
        return Failed("labels", why)

    # -- after a pass ---------------------------------------------------------------------
    def _verified(
        self,
        base: rp.Report,
        verified: _Verified,
        options: list[tuple[FixKind, Candidate]],
        reference: Reference,
        limit: int,
        ctx: Context,
    ) -> rp.Report:
        parts = verified.parts
        minimal = True
        if len(parts) > 1:
            verified, minimal = self._one_minimal(verified, reference, limit, ctx)
        elif reference.kind == FINITE and any(s.after for s in verified.sites):
            verified = self._smaller_equivalent(base, verified, options, limit, ctx)
        if len(verified.parts) > 1:
            base.notes.append(
                f"{len(verified.parts)} conflicts, each diagnosed by a traced run of the script "
                "with the edits before it; every edit was checked to be needed"
            )
        return self._fixed(base, verified, reference, minimal=minimal)

    def _one_minimal(
        self, verified: _Verified, reference: Reference, limit: int, ctx: Context
    ) -> tuple[_Verified, bool]:
        """Drop each kept edit set once; keep the smaller set whenever it still passes.
        No run is needed for an edit set whose conflict the script met before reaching any
        line the later edits change (``autoclone.needed``): without it, the script fails
        there as the traced run did."""
        kept = list(verified.parts)
        for at, part in enumerate(kept):
            if len(verified.parts) == 1 or self._out_of_time():
                break
            rest = [p for p in verified.parts if p is not part]
            sites = [s for p in rest for s in p.sites]
            later = [s for p in kept[at + 1 :] for s in p.sites]
            intact = verified.parts == kept  # the traced runs' scripts, nothing dropped
            if self._failed_before(sites) or (
                intact and needed.untouched(later, part.executed, self.project.lines)
            ):
                continue
            outcome, smaller = self._verify(
                sites, reference, limit, [p.kind for p in rest], ctx, verified.refs
            )
            if isinstance(outcome, Passed):
                verified = smaller._replace(parts=rest, refs=verified.refs)
        return verified, not self._out_of_time()

    def _smaller_equivalent(
        self,
        base: rp.Report,
        cut: _Verified,
        options: list[tuple[FixKind, Candidate]],
        limit: int,
        ctx: Context,
    ) -> _Verified:
        """A detach right after the backward call cuts the graph exactly where backward
        used it, and so defines what the patched program must compute. A cut at the read
        that changes fewer lines is taken only if its losses and gradients are the same
        (it is not, for instance, between the micro-steps of gradient accumulation)."""
        most = _lines(cut.sites)
        smaller = [(k, c) for k, c in options if not any(s.after for s in c.sites)
                   and _lines(list(c.sites)) < most][:2]  # fmt: skip
        same = Reference(FULL, cut.run.losses, cut.run.grads, cut.run.backward)
        found = cut.parts[-1].found
        for kind, cand in smaller:
            if self._failed_before(list(cand.sites)):
                continue
            outcome, verified = self._verify(list(cand.sites), same, limit)
            if isinstance(outcome, Passed):
                base.notes.append(
                    "the shorter edit was checked to compute the same losses and gradients as "
                    "detaching right after the backward call"
                )
                return verified._replace(parts=[_Part(kind, found, cand.sites)])
        return cut

    # -- the ddmin fallback ---------------------------------------------------------------
    def _search(
        self,
        base: rp.Report,
        found: Diagnosis,
        reference: Reference,
        limit: int,
    ) -> rp.Report:
        """ddmin over every switchable site (clones and out-of-place rewrites), the edits
        that got a run further tried first; the result is verified as a plain patched run."""
        guided = self.options.strategy == "predict"
        ranked = list(self._promising) if guided else []
        ranked += priority(found, self.project.sites) if guided else []
        result = self._ddmin(reference, limit, ranked, found.error_class)
        if result.best is None:
            base.summary = _no_fix_reason(result, len(self.project.sites))
            return base
        chosen = [s for s in self.project.sites if s.id in result.best]
        self.say("verifying the patched script")
        verdict, verified = self._verify(chosen, reference, limit)
        if not isinstance(verdict, Passed):
            base.summary = f"the patched script failed verification: {_outcome_text(verdict)}"
            return base
        parts = [_Part(fixes.kind_of(s), found, (s,)) for s in chosen]
        return self._fixed(base, verified._replace(parts=parts), reference, minimal=result.minimal,
                           stopped=result.stopped)  # fmt: skip

    def _ddmin(
        self, reference: Reference, limit: int, ranked: list[str], original: str
    ) -> SearchResult:
        instrumented = self.project.render(self.project.sites, instrument_edits)
        base = self.project.spec(instrumented, mode=PLAIN, limit=limit)

        def test(config: frozenset[str]) -> Outcome:
            self.say(f"run {self.runner.runs + 1}: {len(config)} clone(s) enabled")
            run = self.runner.run(replace(base, sites=config))
            outcome = judge(run, reference)
            if isinstance(outcome, Passed):  # instrumented: every line where it was
                outcome = self._labels_kept(run, lambda frame: frame)
            self.say(f"  -> {_outcome_text(outcome)}")
            return outcome

        deadline = self.started + self.options.budget
        ids = [s.id for s in self.project.sites]
        known: dict[frozenset[str], Outcome] = {frozenset(): Failed("original", original)}
        known |= {k: v for k, v in self._known.items() if k <= set(ids)}
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
            jobs=self._jobs(),
        )

    def _jobs(self) -> int:
        """Trials at once, saying so when memory, not the cores, sets the number."""
        jobs = jobs_for(self.options, self._trial_seconds, self._trial_mb)
        if jobs < jobs_for(self.options, self._trial_seconds):
            self.say(f"{jobs} trial(s) at once: each takes {self._trial_mb:.0f} MB at its peak")
        return jobs

    # -- the report -----------------------------------------------------------------------
    def _fixed(
        self,
        base: rp.Report,
        verified: _Verified,
        reference: Reference,
        *,
        minimal: bool,
        stopped: bool = False,
    ) -> rp.Report:
        unsafe = references.at_full_size(self.project, self.runner, verified.patched,
                                         self.options.steps, self.say)  # fmt: skip
        if unsafe is not None:
            base.summary = unsafe
            return base
        sources, chosen = self.project.sources, verified.sites
        changes = [(sources[rel], patch_edits([s for s in chosen if s.file == rel]))
                   for rel in verified.patched]  # fmt: skip
        base.status, base.minimal = rp.FIXED, minimal
        try:
            base.patch_bytes = render_diff_bytes(changes, relative_to=self.options.cwd)
        except PatchError as exc:
            base.status, base.summary = rp.UNFIXABLE, f"the verified patch cannot be written: {exc}"
            return base
        base.patch = render_diff(changes, relative_to=self.options.cwd)
        base.edits = rp.edits_of(chosen)
        base.changes = [(sources[rel], text) for rel, text in verified.patched.items()]
        base.explanation += _reasons(verified.parts, self.project.lines)
        same = isinstance(judge(verified.run, reference), Passed)
        for part in verified.parts:
            if not (part.kind.lenient and same):
                base.notes += part.kind.notes(part.found, part.sites, self.project.lines)
        if frozenset(s.id for s in verified.sites) in self._aliased:
            base.notes.append(
                "the numbers differ from the original's: it read a tensor an in-place module "
                "had overwritten through another name (an identity shortcut of the "
                "activation's input); the patch computes what the program computes with "
                "every inplace flag off, which is what the flag, a memory saving, promises"
            )
        if verified.run.cuda_mapped:
            base.notes.append(rp.cpu_note(verified.run.cuda_mapped))
        base.notes += [rp.late_note(line, base.steps["limit"]) for line in verified.run.late]
        kinds = ", ".join(dict.fromkeys(s.fix for s in chosen))
        n = len(chosen)
        base.summary = (
            f"fixed with {n} edit{'s' if n > 1 else ''} ({kinds}), verified by a run of the "
            "patched script"
        )
        if stopped:
            base.notes.append("time budget reached: the patch is verified but may not be minimal")
        return base


def _forward_of(first: RunResult, found: Diagnosis) -> RunResult | None:
    """The failing step's forward numbers where a run already has them: a fork's
    (``autoclone.child_fork``) or, for a NaN from a backward function, the traced run's
    own, whose forward pass is the program's (only a gradient was not finite)."""
    if found.error_class == cls.NAN_GRADIENT and first.failed_in_backward:
        return replace(first, status="stopped")
    return first.forward
