"""One repair's inputs: what the user asked for, and their project as read once.

``load_project`` reads the script and the local modules it imports, finds the candidate
sites and the knobs that size a run; ``Project`` renders any variant of those files as a
trial sees it (``--set`` overrides and the shrink plan applied, the patch never);
``make_runner`` and ``first_run`` are shared by ``fix`` and ``explain``.
"""

from __future__ import annotations

import ast
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import libcst as cst

from autoclone import launcher as launching
from autoclone import notebook as nbk
from autoclone.child import ANOMALY, LOCATE
from autoclone.codemods.knobs import Knob, find_knobs, merge
from autoclone.codemods.overrides import apply_overrides
from autoclone.codemods.sites import Site, find_sites
from autoclone.patch import SourceFile, apply_edits
from autoclone.project import user_files
from autoclone.setvalues import argparse_calls, check_option_value, constant_value, module_values
from autoclone.shrink import Plan
from autoclone.shrink import first_run as shrunk_first_run
from autoclone.snapshot import TooLarge
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
    #: "none": the script runs as one process; "torchrun": every trial is launched by
    #: ``torch.distributed.run`` with ``nproc`` processes (``--launcher torchrun --nproc N``).
    launcher: str = "none"
    nproc: int = 1
    #: Where trials cannot be isolated (no user namespaces): let them write outside the
    #: project for real instead of stopping at the first such write
    allow_outside_writes: bool = False
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
    script: str = ""  # the file trials run, relative to root (a notebook's: its script)
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
    wrong = launching.check(options.launcher, options.nproc)
    if wrong:
        raise BadInput(wrong)
    script, root = _script_and_root(options)
    sources: dict[str, SourceFile] = {}
    if nbk.is_notebook(script):
        paths = _notebook_files(script, root, options, sources)
    else:
        paths = user_files(script, root)
    for path in paths:
        rel = path.relative_to(root).as_posix()
        sources[rel] = _read_source(path, _shown(path, options.cwd))
    sites = [site for rel, src in sources.items() for site in find_sites(src.text, rel)]
    knobs = merge(
        knob
        for rel, src in sources.items()
        for knob in find_knobs(src.text, rel, options.args)
        if knob.name not in options.overrides
    )
    constants = _constants(options.overrides, sources)
    return Project(root, sources, sites, constants, knobs, script=next(iter(sources)))


def _notebook_files(
    script: Path, root: Path, options: Options, sources: dict[str, SourceFile]
) -> list[Path]:
    """A notebook's code cells as the project's first file (a script that exists only in
    the trials' copies), and the local modules it imports."""
    shown = _shown(script, options.cwd)
    try:
        nb = nbk.read(script)
    except nbk.NotebookError as exc:
        raise BadInput(f"{shown}: {exc}") from exc
    rel = nbk.script_name(script.relative_to(root).as_posix())
    if (root / rel).exists():
        raise BadInput(f"{shown}: {rel} exists; autoclone runs the notebook's code under that name")
    try:
        compile(nb.script, rel, "exec", dont_inherit=True)
        cst.parse_module(nb.script)
    except SyntaxError as exc:
        cell, line = nb.where(exc.lineno or 0) or (0, 0)
        raise BadInput(f"{shown} cell {cell}, line {line}: syntax error: {exc.msg}") from exc
    except cst.ParserSyntaxError as exc:
        cell, line = nb.where(exc.raw_line) or (0, 0)
        raise BadInput(f"{shown} cell {cell}, line {line}: syntax error") from exc
    sources[rel] = nb.source_file(root, rel)
    with tempfile.TemporaryDirectory(prefix="autoclone-nb-") as folder:  # imports, as read
        program = Path(folder, "notebook.py")
        program.write_text(nb.script, encoding="utf-8")
        return user_files(program, root)[1:]


def user_root(options: Options) -> Path:
    """The project folder as the user named it: ``--root``, else the folder the script's
    path is in (a link's own folder, not its target's)."""
    return Path(os.path.abspath(options.root or options.script.absolute().parent))


def _script_and_root(options: Options) -> tuple[Path, Path]:
    script = options.script.resolve()
    if not script.exists():
        raise BadInput(f"{options.script}: no such file")
    if not script.is_file():
        raise BadInput(f"{options.script}: not a file")
    root = (options.root or script.parent).resolve()
    if not script.is_relative_to(root):
        raise BadInput(f"{options.script}: not under the project root {root}")
    if root == Path(root.anchor):
        raise BadInput(f"the project root cannot be {root}, the whole file system: pass --root")
    return script, root


def _read_source(path: Path, shown: str) -> SourceFile:
    """Read and compile one file; its problem, located as the user would type it."""
    try:
        src = SourceFile.read(path)
        compile(src.text, shown, "exec", dont_inherit=True)
        cst.parse_module(src.text)
    except SyntaxError as exc:
        where = f"{shown}:{exc.lineno}:{exc.offset or 0}" if exc.lineno else shown
        raise BadInput(f"{where}: syntax error: {exc.msg}") from exc
    except (UnicodeDecodeError, LookupError, OSError, ValueError) as exc:
        raise BadInput(f"{shown}: cannot read: {exc}") from exc
    except cst.ParserSyntaxError as exc:
        raise BadInput(f"{shown}:{exc.raw_line}:{exc.raw_column}: syntax error") from exc
    return src


def dry_run_refusal(options: Options) -> str | None:
    """``--dry-run`` prints a diff for ``git apply`` where the user stands; for a script
    outside that folder no such diff exists (``git apply`` refuses ``../``), so say so
    before spending minutes on the repair."""
    script = options.script.resolve()
    if script.is_relative_to(options.cwd.resolve()) or nbk.is_notebook(script):
        return None  # a notebook's cell diff is for reading: it is never a git patch
    link = f"is a link to {script}, which " if options.script.is_symlink() else ""
    return (
        f"{options.script} {link}is outside the current directory, so a diff printed here could "
        f"not be applied (git apply refuses ../ paths): run from {script.parent} or a "
        "folder above it, or without --dry-run to write the fix"
    )


def editor_paths(lines: list[str], options: Options) -> list[str]:
    """``path:line:col: message`` lines name files relative to the project root; an
    editor resolves them from where the command ran, so make them relative to that."""
    root = (options.root or options.script.resolve().parent).resolve()
    out = []
    for line in lines:
        rel, sep, rest = line.partition(":")
        known = sep and not os.path.isabs(rel) and (root / rel).exists()
        out.append(f"{_shown(root / rel, options.cwd)}:{rest}" if known else line)
    return out


def _shown(path: Path, cwd: Path) -> str:
    """A path as the user would type it: relative to where they stand, with ``../``
    when it must (absolute only where no relative path exists, another drive)."""
    try:
        return Path(os.path.relpath(path, cwd.resolve())).as_posix()
    except ValueError:
        return str(path)


def _constants(overrides: Mapping[str, str], sources: Mapping[str, SourceFile]) -> dict[str, str]:
    """The ``--set`` values for module constants, checked against what they replace: a
    bad value is the user's input error, not the script's."""
    constants: dict[str, tuple[str, ast.expr | None]] = {}
    options: dict[str, ast.Call] = {}
    for rel, src in sources.items():
        tree = ast.parse(src.text)
        constants.update(
            {k: (f"{rel}:{v.lineno}" if v else rel, v) for k, v in module_values(tree).items()}
        )
        options.update(argparse_calls(tree))
    unknown = sorted(set(overrides) - set(constants) - set(options))
    if unknown:
        raise BadInput(
            f"--set {unknown[0]}: no module-level constant or argparse option by that name"
        )
    out = {}
    try:
        for name, value in overrides.items():
            if name in constants:
                out[name] = constant_value(name, value, *constants[name])
            else:
                check_option_value(name, value, options[name])
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    return out


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


def cores(options: Options | None = None) -> int:
    """Trials the machine runs at once: a torchrun trial takes a core per rank."""
    ranks = options.nproc if options is not None and options.launcher != launching.NONE else 1
    return max(1, min(os.cpu_count() or 1, 4) // ranks)


#: Trials at once must fit in this share of the memory available: the rest is the user's.
MEMORY_SHARE = 0.5


def jobs_for(
    options: Options, trial_seconds: float, peak_mb: float = 0.0, free_mb: float | None = None
) -> int:
    """Trials at once: the user's ``-j``, else every core only for slow trials; never
    more than fit in memory, so the tool never holds two copies of a model that only
    fits once (``peak_mb``: the first run's peak resident memory)."""
    wanted = (
        options.jobs
        if options.jobs is not None
        else (cores(options) if trial_seconds >= PARALLEL_AFTER else 1)
    )
    return max(1, min(wanted, memory_slots(peak_mb, free_mb)))


def memory_slots(peak_mb: float, free_mb: float | None = None) -> int:
    """How many trials of ``peak_mb`` each fit in ``MEMORY_SHARE`` of the free memory."""
    free = (available_mb() if free_mb is None else free_mb) if peak_mb > 0 else 0.0
    if free <= 0:
        return 1 << 16  # unknown: the cores decide
    return max(1, int(free * MEMORY_SHARE // peak_mb))


def available_mb() -> float:
    """Memory the kernel can give without swapping (MemAvailable), in MB; 0 if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0


def make_runner(options: Options, project: Project) -> Runner:
    """The runner, with the folder already copied for the trials (``BadInput`` when it
    cannot be: more than the temporary directory can take)."""
    script = project.script or options.script.resolve().relative_to(project.root).as_posix()
    cwd = options.cwd.resolve()
    inside = cwd.is_relative_to(project.root)
    runner = Runner(
        root=project.root,
        script=script,
        argv=options.args,
        cwd=cwd.relative_to(project.root).as_posix() if inside else ".",
        timeout=options.timeout,
        jobs=options.jobs or cores(options),
        env=_device_env(options.device),
        overrides={k: v for k, v in options.overrides.items() if k not in project.constants},
        encodings={rel: src.encoding for rel, src in project.sources.items()},
        launcher=options.launcher,
        nproc=options.nproc,
        warm=options.launcher == launching.NONE,  # torchrun starts its own ranks: no fork
        allow_outside=options.allow_outside_writes,
    )
    try:
        size = runner.prepare().size
    except TooLarge as exc:
        runner.close()
        raise BadInput(str(exc)) from exc
    except BaseException:
        runner.close()  # a stop signal while copying: remove what was copied
        raise
    if size >= 1 << 28:
        options.progress(f"copied the project folder ({size / 2**30:.1f} GB) once for the trials")
    return runner


def first_run(
    project: Project,
    runner: Runner,
    options: Options,
    say: Callable[[str], None],
    past_conflict: bool = False,
) -> RunResult:
    """Reproduce the error with the tracer on (without it where it cannot run), at sizes
    small enough to be quick; the plan chosen is kept in ``project.plan``. With
    ``past_conflict`` (one process only), a version conflict does not end the run: it
    goes on for ``--steps`` backward calls with the saved values kept, which are the
    reference numbers a repair needs (``autoclone.references.past_conflict``)."""
    past = options.steps if past_conflict and options.launcher == launching.NONE else 0

    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        say(f"running {runner.script} with the autograd tracer")
        spec = project.spec(plan=plan, mode=LOCATE, timeout=timeout, past_conflict=past)
        first = runner.run(spec).at_conflict()
        if first.error is not None and "saved tensor hooks" in first.error.message:
            say("the script uses torch.func, which refuses the tracer: rerunning with anomaly mode")
            first = runner.run(project.spec(plan=plan, mode=ANOMALY, timeout=timeout))
        return first

    first, project.plan = shrunk_first_run(
        project.knobs, attempt, shrink=options.shrink, timeout=options.timeout, say=say
    )
    if project.plan.knobs:
        say(f"trials run shrunk: {project.plan.describe()}")
    if runner.skipped:
        say(f"note: trials run without {', '.join(runner.skipped)}: not copied")
    return _with_root_hint(first, project.root, options.cwd)


_MISSING = re.compile(r"No such file or directory: '(?P<path>[^']+)'")


def _with_root_hint(first: RunResult, root: Path, cwd: Path) -> RunResult:
    """A file the script opens relative to the current directory, run from above the
    project root, is missing in the trial (whose folder is the root's copy): say which
    ``--root`` makes it exist, in the same one line."""
    match = _MISSING.search(first.error.message) if first.error else None
    here = cwd.resolve()
    if first.error is None or match is None or here.is_relative_to(root):
        return first
    path = match.group("path")
    if os.path.isabs(path) or not (here / path).exists():
        return first
    common = Path(os.path.commonpath([here, root]))
    hint = (
        f" (trials run in a copy of {_shown(root, cwd)}/; {path} is found from the current "
        f"directory: rerun with --root {_shown(common, cwd)})"
    )
    return replace(first, error=replace(first.error, message=first.error.message + hint))
