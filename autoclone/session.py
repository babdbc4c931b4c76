"""One repair's inputs: what the user asked for, and their project as read once.

``load_project`` reads the script and the local modules it imports, finds the candidate
sites and the knobs that size a run; ``Project`` renders any variant of those files as a
trial sees it (``--set`` overrides and the shrink plan applied, the patch never);
``make_runner`` and ``first_run`` are shared by ``fix`` and ``explain``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import libcst as cst

from autoclone.child import ANOMALY, LOCATE
from autoclone.codemods.knobs import Knob, find_knobs, merge
from autoclone.codemods.overrides import apply_overrides, argparse_options, module_constants
from autoclone.codemods.sites import Site, find_sites
from autoclone.patch import SourceFile, apply_edits
from autoclone.project import user_files
from autoclone.shrink import Plan
from autoclone.shrink import first_run as shrunk_first_run
from autoclone.trial import Runner, RunResult, RunSpec


class BadInput(Exception):
    """Input autoclone cannot work on; the message is the one line the user sees."""


@dataclass(frozen=True)
class Options:
    """What the user asked for. ``progress`` receives one-line status messages."""

    script: Path
    args: tuple[str, ...] = ()
    steps: int = 3
    timeout: float = 120.0
    device: str = "auto"
    overrides: Mapping[str, str] = field(default_factory=dict)
    root: Path | None = None
    budget: float = 900.0
    cwd: Path = field(default_factory=Path.cwd)
    #: "predict" (tracer-guided, then ddmin), or the baselines the benchmark compares:
    #: "ddmin" (no localisation) and "linear" (seed 000's clone-all-then-strip).
    strategy: str = "predict"
    #: None: shrink epochs and sizes for trials when a full-size run is slow; True: always;
    #: False: never (``--no-shrink``).
    shrink: bool | None = None
    #: Trials that may run at once in the search (ddmin's subsets are independent).
    #: None: one per core (up to 4) when a trial takes long enough to pay for another warm
    #: interpreter (``PARALLEL_AFTER`` seconds), else one.
    jobs: int | None = None
    progress: Callable[[str], None] = lambda message: None


@dataclass
class Project:
    """The user's files as read once: their sources, sites and trial variants."""

    root: Path
    sources: dict[str, SourceFile]
    sites: list[Site]
    constants: dict[str, str]  # module-level overrides, applied to every trial text
    knobs: list[Knob] = field(default_factory=list)  # what could be shrunk for trials
    plan: Plan = field(default_factory=Plan)  # what trials run shrunk, once decided
    _bases: dict[Plan, dict[str, str]] = field(default_factory=dict, init=False, repr=False)

    def texts(
        self, variant: Mapping[str, str] | None = None, *, plan: Plan | None = None
    ) -> dict[str, str]:
        """What a run writes over the copy: the originals (overrides and the shrink plan,
        the project's unless another is given, applied once) with the variant's files,
        treated alike, over theirs. ``plan=Plan()`` is the user's own sizes."""
        plan = self.plan if plan is None else plan
        changed = plan.texts(
            {rel: apply_overrides(text, self.constants) for rel, text in (variant or {}).items()}
        )
        return {**self._base(plan), **changed}

    def spec(
        self, variant: Mapping[str, str] | None = None, *, plan: Plan | None = None, **kw: Any
    ) -> RunSpec:
        """A run of the variant at the plan's sizes (the project's plan by default)."""
        plan = self.plan if plan is None else plan
        return RunSpec(self.texts(variant, plan=plan), options=plan.options(), **kw)

    def _base(self, plan: Plan) -> dict[str, str]:
        if plan not in self._bases:
            self._bases[plan] = plan.texts(self._overridden)
        return self._bases[plan]

    @cached_property
    def _overridden(self) -> dict[str, str]:
        return {rel: apply_overrides(src.text, self.constants) for rel, src in self.sources.items()}

    @cached_property
    def lines(self) -> dict[str, list[str]]:
        """Source lines of every user file, for explanations; read once."""
        return {rel: src.text.splitlines() for rel, src in self.sources.items()}

    def render(self, sites: list[Site], edits: Callable[[list[Site]], list]) -> dict[str, str]:
        out = {}
        for rel, src in self.sources.items():
            own = [s for s in sites if s.file == rel]
            if own:
                out[rel] = apply_edits(src, edits(own))
        return out


def load_project(options: Options) -> Project:
    """Read and analyse the user's files; every problem becomes a ``BadInput`` line."""
    script = options.script.resolve()
    if not script.exists():
        raise BadInput(f"{options.script}: no such file")
    if not script.is_file():
        raise BadInput(f"{options.script}: not a file")
    root = (options.root or script.parent).resolve()
    if not script.is_relative_to(root):
        raise BadInput(f"{options.script}: not under the project root {root}")
    sources, sites = {}, []
    for path in user_files(script, root):
        rel = path.relative_to(root).as_posix()
        shown = _shown(path, options.cwd)
        try:
            sources[rel] = SourceFile.read(path)
            compile(sources[rel].text, shown, "exec", dont_inherit=True)
            sites.extend(find_sites(sources[rel].text, rel))
        except SyntaxError as exc:
            where = f"{shown}:{exc.lineno}:{exc.offset or 0}"
            raise BadInput(f"{where}: syntax error: {exc.msg}") from exc
        except (UnicodeDecodeError, LookupError, OSError) as exc:
            raise BadInput(f"{shown}: cannot read: {exc}") from exc
        except cst.ParserSyntaxError as exc:
            raise BadInput(f"{shown}:{exc.raw_line}:{exc.raw_column}: syntax error") from exc
    knobs = merge(
        knob
        for rel, src in sources.items()
        for knob in find_knobs(src.text, rel, options.args)
        if knob.name not in options.overrides
    )
    return Project(root, sources, sites, _constants(options.overrides, sources), knobs)


def _shown(path: Path, cwd: Path) -> str:
    """A path as the user would type it: relative to where they stand when possible."""
    try:
        return path.relative_to(cwd.resolve()).as_posix()
    except ValueError:
        return str(path)


def _constants(overrides: Mapping[str, str], sources: Mapping[str, SourceFile]) -> dict[str, str]:
    constants: set[str] = set()
    options: set[str] = set()
    for src in sources.values():
        constants |= module_constants(src.text)
        options |= argparse_options(src.text)
    unknown = sorted(set(overrides) - constants - options)
    if unknown:
        raise BadInput(
            f"--set {unknown[0]}: no module-level constant or argparse option by that name"
        )
    return {k: v for k, v in overrides.items() if k in constants}


def _device_env(device: str) -> dict[str, str]:
    if device == "cpu":
        return {"CUDA_VISIBLE_DEVICES": ""}
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise BadInput("--device cuda: no CUDA device is available on this machine")
    return {}


#: A trial must take this long before running several at once pays: each extra trial
#: slot starts its own warm interpreter (2-3 s of importing torch, measured on 2 cores).
PARALLEL_AFTER = 2.0


def cores() -> int:
    return min(os.cpu_count() or 1, 4)


def jobs_for(options: Options, trial_seconds: float) -> int:
    """Trials at once: the user's ``-j``, else every core only for slow trials."""
    if options.jobs is not None:
        return options.jobs
    return cores() if trial_seconds >= PARALLEL_AFTER else 1


def make_runner(options: Options, project: Project) -> Runner:
    script = options.script.resolve().relative_to(project.root).as_posix()
    cwd = options.cwd.resolve()
    inside = cwd.is_relative_to(project.root)
    return Runner(
        root=project.root,
        script=script,
        argv=options.args,
        cwd=cwd.relative_to(project.root).as_posix() if inside else ".",
        timeout=options.timeout,
        jobs=options.jobs or cores(),
        env=_device_env(options.device),
        overrides={k: v for k, v in options.overrides.items() if k not in project.constants},
        encodings={rel: src.encoding for rel, src in project.sources.items()},
    )


def first_run(
    project: Project, runner: Runner, options: Options, say: Callable[[str], None]
) -> RunResult:
    """Reproduce the error with the tracer on (without it where it cannot run), at sizes
    small enough to be quick; the plan chosen is kept in ``project.plan``."""

    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        say(f"running {runner.script} with the autograd tracer")
        first = runner.run(project.spec(plan=plan, mode=LOCATE, timeout=timeout))
        if first.error is not None and "saved tensor hooks" in first.error.message:
            say("the script uses torch.func, which refuses the tracer: rerunning with anomaly mode")
            first = runner.run(project.spec(plan=plan, mode=ANOMALY, timeout=timeout))
        return first

    first, project.plan = shrunk_first_run(
        project.knobs, attempt, shrink=options.shrink, timeout=options.timeout, say=say
    )
    if project.plan.knobs:
        say(f"trials run shrunk: {project.plan.describe()}")
    return first
