"""The reference runs: what the patches of a kind must reproduce, computed once a repair.

* same numbers: the original run under ``allow_mutation_on_saved_tensors`` for a version
  error (every forward value as written, every saved tensor as it was when saved), else
  the failing step's forward pass with grad disabled, which keeps the program's aliasing
  that the eager view errors forbid; for a leaf written by hand where that cannot run (a
  weight edited after an attribution that needs grad, with no backward after it), the
  program with its leaf writes done as data writes, compared by what it prints;
* retained: the original run with no backward call freeing its graph, which also records
  which optimizers each backward call reached (``autoclone.leaks``);
* none: a detach changes what is differentiated on purpose, so only K finite steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autoclone import classify as cls
from autoclone.child import CONSTANT_TARGETS as CONSTANT_TARGETS_MODE
from autoclone.child import (
    FORWARD_REFERENCE,
    INPLACE_OFF,
    LEAF_DATA,
    REFERENCE,
    RETAIN_REFERENCE,
)
from autoclone.codemods.render import patch_edits
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, target_refusal
from autoclone.fixes._ast import forward_line
from autoclone.fixes.base import CONSTANT_TARGETS, NONE, RETAINED, Context
from autoclone.oracle import FINITE, FIRST_LOSS, FULL, OUTPUT, PREFIX, Reference, judge
from autoclone.oracle import RETAINED as RETAINED_NUMBERS
from autoclone.outcomes import Passed
from autoclone.repair_text import _outcome_text
from autoclone.session import Project
from autoclone.shrink import Plan
from autoclone.trial import Runner, RunResult, RunSpec

Found = tuple[Reference | str, dict[str, Any]]


def compute(
    which: str,
    found: Diagnosis,
    steps: tuple[int, int],
    project: Project,
    runner: Runner,
    say: Callable[[str], None],
    files: Mapping[str, str] | None = None,
    traced: Reference | None = None,
    in_backward: bool = True,
    forward: RunResult | None = None,
) -> Found:
    """The reference ``which`` for ``steps`` = (backward calls before the error, the limit
    a patched run must reach), with what its run showed, or why there is none; of the
    script as patched by ``files`` where given (a later conflict's). ``traced``: the
    mutation-allowed numbers the traced run already computed (``past_conflict``);
    ``in_backward``: the error was raised by a backward call (not ``autograd.grad``, not
    an evaluation after the last step); ``forward``: the failing step's forward reference
    a fork of the traced run computed (``autoclone.child_fork``). With no reference
    numbers, a patched run that
    ends on its own must have got past the failing call: one backward call more than
    the calls before it, or as many where the failing call was not one."""
    before, limit = steps
    variant = _Variant(project, files)
    if which == NONE:
        return Reference(FINITE, (), (), min(limit, before + 1) if in_backward else before), {}
    if which == RETAINED:
        return _retained(limit, variant, runner, say)
    if which == CONSTANT_TARGETS:
        return _constant_targets(found, limit, variant, runner, say)
    if traced is not None and found.error_class == cls.INPLACE_VERSION:
        say("reference numbers: the traced run went on past the conflict, saved values kept")
        return traced, {}
    flows = _flows_on(found, project)
    reference = _same_numbers(found.error_class, before, limit, variant, runner, say, flows,
                              forward)  # fmt: skip
    if reference is None and flows:
        say("no reference numbers: the written leaf's value flows on in a forward; judged "
            "as a cut")
        return Reference(FINITE, (), (), min(limit, before + 1)), {"flows": True}
    return reference or "could not compute reference numbers for the correct program", {}


def _flows_on(found: Diagnosis, project: Project) -> bool:
    """A leaf written in a user's ``forward`` from a value with a graph (an equivariant
    layer's ``coord += agg`` on positions that require grad for forces): the program means
    the value to flow on through autograd. Done as a data write it would not, so that
    reference is no program's; where the forward pass needs grad itself (forces taken with
    ``autograd.grad``) nothing computes the numbers, and the patch is judged as a cut."""
    if found.error_class != cls.LEAF_INPLACE or not found.written_from_grad:
        return False
    texts = {rel: src.text for rel, src in project.sources.items()}
    return forward_line(found, Context(project.sites, texts, project.lines)) is not None


class _Variant:
    """The script, or the script as patched so far, as reference runs ask for it."""

    def __init__(self, project: Project, files: Mapping[str, str] | None) -> None:
        self.project, self.files = project, files

    def spec(self, **kw: Any) -> RunSpec:
        return self.project.spec(self.files, **kw)


def _retained(limit: int, project: _Variant, runner: Runner, say: Callable[[str], None]) -> Found:
    say("computing reference numbers (no backward call frees its graph)")
    ref = runner.run(project.spec(mode=RETAIN_REFERENCE, limit=limit))
    if ref.status in ("completed", "stopped"):
        leaks = [w for w in ref.warnings if w.get("kind") == "gradient_leak"]
        return Reference(RETAINED_NUMBERS, ref.losses, ref.grads, ref.backward,
                         **_by_optimizer(ref)), {"leaks": leaks}  # fmt: skip
    failure = ref.error.line if ref.error else ref.status
    error_class = cls.classify(failure)
    what = failure[:200] if error_class == cls.NOT_AUTOGRAD else cls.DESCRIPTIONS[error_class]
    why = (
        "retain_graph=True would only delay the error: with no graph freed, the script "
        f"still fails ({what}); something between the two backward calls (an optimizer "
        "step?) changes what the graph saved, which is a choice about training that "
        "autoclone leaves to you"
    )
    if _another_conflict(ref, cls.INPLACE_VERSION, calls=1) not in ("", cls.BACKWARD_TWICE):
        why = (  # a second bug further on (an EMA written in place after the step)
            f"with no graph freed the script gets past this error and then fails ({what}); "
            "whether the second loss trains through the graph the first one freed "
            "(retain_graph=True) or reads what it shares as a constant (.detach() where it "
            "reads it) is a choice about training that autoclone leaves to you"
        )
    if error_class == cls.INPLACE_VERSION:  # a step changed what the graph saved: no
        # retained numbers, but a detach of the shared value is judged like every cut
        return Reference(FINITE, (), (), limit), {"retained_failed": why}
    return why, {}


def _constant_targets(
    found: Diagnosis, limit: int, project: _Variant, runner: Runner, say: Callable[[str], None]
) -> Found:
    """The script with every watched loss's target constant: what a patch that detaches
    the target must compute, found without the patch."""
    say("computing reference numbers (every loss target constant)")
    ref = runner.run(project.spec(mode=CONSTANT_TARGETS_MODE, limit=limit))
    numbers = _mutation_allowed(ref, limit, found.error_class)  # or up to a second bug's
    if numbers is not None:
        return numbers, {}
    failure = ref.error.line[:200] if ref.error else ref.status
    why = target_refusal(found, project.project.lines)
    return f"{why} (with every loss target constant the script still fails: {failure})", {}


def inplace_off(limit: int, project: Project, runner: Runner,
                say: Callable[[str], None]) -> Reference | None:  # fmt: skip
    """The numbers of the program with every in-place activation and dropout out of
    place (``INPLACE_OFF``), as far as it runs: what an ``inplace=False`` edit computes
    where the in-place write changed a tensor another name still read."""
    say("computing reference numbers (every module's inplace flag off)")
    return _mutation_allowed(runner.run(project.spec(mode=INPLACE_OFF, limit=limit)), limit)


def past_conflict(run: RunResult, steps: int) -> tuple[RunResult, Reference | None]:
    """A first run that went on past its version conflict (the tracer's copy-on-write;
    ``RunResult.at_conflict``): the numbers it computed are those of the run under
    ``allow_mutation_on_saved_tensors`` (``bench/traced_reference.py`` compares them on
    every case), so the separate reference run is not needed."""
    if run.past is None:
        return run, None
    limit, other = run.backward + steps, run.past.other_conflict
    if other > run.backward:  # a conflict of another kind later: its round's numbers
        past = run.past
        return run, Reference(PREFIX, past.losses[:other], past.grads[:other], limit,
                              ended=cls.INPLACE_VERSION, **_by_optimizer(past))  # fmt: skip
    return run, _mutation_allowed(run.past, limit)


def _mutation_allowed(
    ref: RunResult, limit: int, first: str = cls.INPLACE_VERSION
) -> Reference | None:
    """The numbers of a reference run (one whose saved tensors kept their values, by
    default): all of them, or those before a conflict other than the ``first`` one it
    removes stopped it."""
    if ref.status in ("completed", "stopped"):
        return Reference(FULL, ref.losses, ref.grads, ref.backward, **_by_optimizer(ref))
    ended = _another_conflict(ref, first)
    if not ended:
        return None
    # the failing call's own loss is left out: the second conflict's edit may change what
    # it reads (a list emptied, not only a graph cut)
    done = ref.backward
    return Reference(PREFIX, ref.losses[:done], ref.grads[:done], limit, ended=ended,
                     **_by_optimizer(ref))  # fmt: skip


def _by_optimizer(run: RunResult) -> dict[str, Any]:
    """What each backward call of the reference gave each optimizer (``oracle.compare``)."""
    return {"call_reach": run.call_reach, "opt_grads": run.opt_grads}


def _another_conflict(ref: RunResult, first: str = cls.INPLACE_VERSION, calls: int = 1) -> str:
    """The error class that ended a reference run once ``calls`` backward calls had
    completed, when it is an autograd error other than the ``first`` one the reference
    removes (a carried state, two backward calls; a version error behind a freed graph):
    the numbers up to it are the program's, the rest is another round's."""
    if ref.status != "error" or ref.error is None or ref.backward < calls:
        return ""
    error_class = cls.classify(ref.error.line)
    if error_class in (cls.NOT_AUTOGRAD, first, cls.NO_GRAPH):
        return ""
    return error_class


def _same_numbers(
    kind: str, before: int, limit: int, project: _Variant, runner: Runner,
    say: Callable[[str], None], flows: bool = False, forward: RunResult | None = None,
) -> Reference | None:  # fmt: skip
    if kind == cls.INPLACE_VERSION:
        say("computing reference numbers (allow_mutation_on_saved_tensors)")
        numbers = _mutation_allowed(runner.run(project.spec(mode=REFERENCE, limit=limit)), limit)
        if numbers is not None:
            return numbers
    # the same run's numbers, forked; but a fork that ran to the script's end saw the
    # failing step with grad on up to the write, where the reference turns it off from the
    # step's start (an attribution that needs grad before a hand edit fails there)
    if forward is not None and project.files is None and forward.status != "completed":
        say("reference numbers: the traced run's failing step, whose gradient alone failed"
            if kind == cls.NAN_GRADIENT else  # ``repair._forward_of``
            "reference numbers: a fork of the traced run did the failing step with grad off")
        ref = forward
    else:
        say("computing reference numbers (forward values with grad disabled)")
        ref = runner.run(project.spec(mode=FORWARD_REFERENCE, limit=before))
    numbers = _first_loss(ref, before, limit)
    if numbers is not None:
        return numbers
    if kind == cls.LEAF_INPLACE and not flows:
        return _leaf_data(before, limit, project, runner, say)
    return None


def _first_loss(ref: RunResult, before: int, limit: int) -> Reference | None:
    """A forward reference's numbers: the failing step's loss computed with grad off."""
    if ref.status == "stopped" and len(ref.losses) == before + 1:
        return Reference(FIRST_LOSS, ref.losses, ref.grads, limit, **_by_optimizer(ref))
    if ref.status == "completed" and len(ref.losses) == before:  # no backward after it
        return Reference(FIRST_LOSS, ref.losses, ref.grads, before, **_by_optimizer(ref))
    return None


def _leaf_data(
    before: int, limit: int, project: _Variant, runner: Runner, say: Callable[[str], None]
) -> Reference | None:
    """The script with its writes into leaves done as data, to its end or ``limit``:
    its backward calls' numbers and what it printed; or, where it met another autograd
    error at the failing step's backward call or later (the script's second bug), the
    numbers of the calls up to it, the failing step's loss included."""
    say("computing reference numbers (leaf writes done as data writes)")
    ref = runner.run(project.spec(mode=LEAF_DATA, limit=limit))
    if _another_conflict(ref, cls.LEAF_INPLACE, calls=before) and len(ref.losses) > before:
        # past the write, the run met the script's next autograd error: the calls up to it
        return Reference(FIRST_LOSS, ref.losses, ref.grads, limit, **_by_optimizer(ref))
    if ref.status not in ("completed", "stopped"):
        return None
    return Reference(OUTPUT, ref.losses, ref.grads, ref.backward, output=ref.stdout,
                     **_by_optimizer(ref))  # fmt: skip


#: One earlier conflict: its reference's name, diagnosis, calls before it, and its edits.
Earlier = tuple[str, Diagnosis, int, Sequence[Site]]


def recomputed(
    earlier: list[Earlier],
    newest: Sequence[Site],
    limit: int,
    refs: Mapping[str, Reference],
    project: Project,
    runner: Runner,
    say: Callable[[str], None],
    memo: dict[tuple[str, frozenset[str]], Reference | str],
) -> dict[str, Reference] | None:
    """The references of the conflicts before, computed again on the script with every
    other edit in, for an edit that changes what every call differentiates (a running
    statistic made constant): the numbers the earlier edits must reproduce are those of
    that program (None: they could not be computed). ``memo`` keeps them by edits."""
    out = dict(refs)
    for which, found, before, sites in earlier:
        others = [s for _, _, _, mine in earlier if mine is not sites for s in mine]
        others += list(newest)
        key = (which, frozenset(s.id for s in others))
        if key not in memo:
            files = project.render(others, patch_edits)
            memo[key] = compute(which, found, (before, limit), project, runner, say,
                                files=files)[0]  # fmt: skip
        ref = memo[key]
        if isinstance(ref, str):
            return None
        out[which] = ref
    return out


def at_full_size(
    project: Project, runner: Runner, patched: Mapping[str, str], steps: int,
    say: Callable[[str], None],
) -> str | None:
    """Trials ran shrunk: the patch must also run K steps at the user's own sizes.
    Returns why not, or None when it did (or when nothing was shrunk)."""
    if not project.plan.knobs:
        return None
    say(f"run {runner.runs + 1}: the patched script at full size, {steps} steps")
    spec = project.spec(dict(patched), plan=Plan(), limit=steps)
    outcome = judge(runner.run(spec), Reference(FINITE, (), (), steps))
    say(f"  -> {_outcome_text(outcome)}")
    if isinstance(outcome, Passed):
        return None
    return (
        "the patch passed at shrunk sizes but not at yours "
        f"({_outcome_text(outcome)}); rerun with --no-shrink"
    )
