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
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import libcst as cst

from autoclone import launcher as launching
from autoclone import network
from autoclone import notebook as nbk
from autoclone.child import ANOMALY, LOCATE
from autoclone.codemods.knobs import Knob, find_knobs, merge
from autoclone.codemods.overrides import apply_overrides
from autoclone.codemods.sites import Site, find_sites
from autoclone.patch import SourceFile, apply_edits
from autoclone.project import (
    SKIP_DIRS,
    is_library,
    module_file,
    module_name,
    scan,
    search_path,
    user_files,
)
from autoclone.setvalues import argparse_calls, check_option_value, constant_value, module_values
from autoclone.shrink import Plan
from autoclone.shrink import first_run as shrunk_first_run
from autoclone.snapshot import TooLarge
from autoclone.trial import ErrorInfo, Runner, RunResult, RunSpec

Frame = tuple[str, int]


class BadInput(Exception):
    """Input autoclone cannot work on; the message is the one line the user sees."""


@dataclass(frozen=True)
class Options:
    """What the user asked for. ``progress`` receives one-line status messages."""

    script: Path  # with ``module``: the file ``python -m`` runs
    args: tuple[str, ...] = ()
    #: ``-m pkg.train``: the script is run as ``python -m pkg.train`` runs it (a package's
    #: module, its relative imports working); the project root defaults to the cwd
    module: str = ""
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
    #: Give trials the network (``autoclone.network``): they post, log and push for real
    allow_network: bool = False
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
    #: The user's modules outside the root, read for the diagnosis to name and never
    #: edited nor written into a trial: key (relative to the root, ``../src/m.py``) -> the
    #: paths a run may load it by (as its search path names it, and its real path)
    outer: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _bases: dict[Plan, dict[str, str]] = field(default_factory=dict, init=False, repr=False)

    def texts(
        self, variant: Mapping[str, str] | None = None, *, plan: Plan | None = None
    ) -> dict[str, str]:
        """What a run writes over the copy: the originals (overrides and the shrink plan,
        the project's unless another is given, applied once) with the variant's files,
        treated alike, over theirs. ``plan=Plan()`` is the user's own sizes."""
        plan = self.plan if plan is None else plan
        changed = plan.texts(
            {
                rel: apply_overrides(text, self.constants)
                for rel, text in (variant or {}).items()
                if rel not in self.outer
            }
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
        return {
            rel: apply_overrides(src.text, self.constants)
            for rel, src in self.sources.items()
            if rel not in self.outer
        }

    @cached_property
    def lines(self) -> dict[str, list[str]]:
        """Source lines of every user file, for explanations; read once."""
        return {rel: src.text.splitlines() for rel, src in self.sources.items()}

    def render(self, sites: list[Site], edits: Callable[[list[Site]], list]) -> dict[str, str]:
        out = {}
        for rel, src in self.sources.items():
            own = [s for s in sites if s.file == rel]
            if own and rel not in self.outer:  # never an edit outside the project
                out[rel] = apply_edits(src, edits(own))
        return out

    def adopt(self, rel: str, src: SourceFile) -> None:
        """A file under the root a run showed to be the user's (imported through a
        search path the script set up itself), read after the project was loaded: its
        sites join the candidates, and the texts are made again."""
        self.sources[rel] = src
        self.sites += find_sites(src.text, rel)
        self._bases.clear()
        for cached in ("_overridden", "lines"):
            self.__dict__.pop(cached, None)


def load_project(options: Options) -> Project:
    """Read and analyse the user's files; every problem becomes a ``BadInput`` line."""
    wrong = launching.check(options.launcher, options.nproc)
    if wrong:
        raise BadInput(wrong)
    script, root = _script_and_root(options)
    sources: dict[str, SourceFile] = {}
    path = search_path(options.cwd.resolve() if options.module else script.parent, options.cwd)
    outer: dict[str, tuple[str, ...]] = {}
    outer_files: list[tuple[Path, Path]] = []  # a notebook's are not looked for
    if nbk.is_notebook(script):
        paths = _notebook_files(script, root, options, sources, path)
    else:
        files = scan(script, root, path)
        paths, outer_files = files.inside, files.outer
    for file in paths:
        rel = file.relative_to(root).as_posix()
        sources[rel] = _read_source(file, _shown(file, options.cwd))
    sites = [site for rel, src in sources.items() for site in find_sites(src.text, rel)]
    knobs = merge(
        knob
        for rel, src in sources.items()
        for knob in find_knobs(src.text, rel, options.args)
        if knob.name not in options.overrides
    )
    constants = _constants(options.overrides, sources)
    first = next(iter(sources))
    for seen, real in outer_files:  # read last: no site, knob or --set target in them
        key = Path(os.path.relpath(real, root)).as_posix()
        try:
            sources[key] = _read_source(real, _shown(real, options.cwd))
        except BadInput:
            continue  # not ours to repair: its own run says what is wrong with it
        outer[key] = tuple(dict.fromkeys([str(seen), str(real)]))
    return Project(root, sources, sites, constants, knobs, script=first, outer=outer)


def _notebook_files(
    script: Path, root: Path, options: Options, sources: dict[str, SourceFile], path: list[Path]
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
        return user_files(program, root, [script.parent, *path[1:]])[1:]


def user_root(options: Options) -> Path:
    """The project folder as the user named it: ``--root``, else the folder the script's
    path is in (a link's own folder, not its target's), or for ``-m`` the current one."""
    default = options.cwd.absolute() if options.module else options.script.absolute().parent
    return Path(os.path.abspath(options.root or default))


def project_root(options: Options) -> Path:
    """The project root, resolved: what the trials copy and file names are relative to."""
    default = options.cwd if options.module else options.script.resolve().parent
    return (options.root or default).resolve()


def find_module(name: str, cwd: Path) -> Path:
    """The file ``python -m name`` would run from ``cwd`` (its ``sys.path[0]``, then the
    ``PYTHONPATH`` entries); ``BadInput`` naming what is wrong, in one line."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        hint = f": for a file, `autoclone fix {name}`" if name.endswith(".py") else ""
        raise BadInput(f"-m {name}: not a module name (dotted identifiers, as pkg.train){hint}")
    found = module_file(name, search_path(cwd.resolve(), cwd))
    if found is None:
        raise BadInput(
            f"-m {name}: no module of that name in the current directory or on PYTHONPATH "
            f"(`python -m {name}` would not find it here either)"
        )
    return found


def _script_and_root(options: Options) -> tuple[Path, Path]:
    shown = f"-m {options.module} ({options.script})" if options.module else str(options.script)
    script = options.script.resolve()
    if not script.exists():
        raise BadInput(f"{shown}: no such file")
    if not script.is_file():
        raise BadInput(f"{shown}: not a file")
    root = project_root(options)
    if not script.is_relative_to(root):
        raise BadInput(f"{shown}: not under the project root {root}")
    if root == Path(root.anchor):
        raise BadInput(f"the project root cannot be {root}, the whole file system: pass --root")
    if options.module and not options.cwd.resolve().is_relative_to(root):
        raise BadInput(
            f"-m {options.module} runs from the current directory, which is outside the "
            f"project root {root}: run from inside it, or pass a --root that holds both"
        )
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
    root = project_root(options)
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
        online=options.allow_network,
        module=options.module,
        user_cwd=cwd,
        outer={path: key for key, paths in project.outer.items() for path in paths},
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
    _adopt(project, runner, first, options.cwd)
    if first.error is None:
        return first
    hint = (
        _root_hint(first.error, project.root, options.cwd)
        or _outside_hint(first.error, project.root, options.cwd)
        or _module_hint(first.error, options)
        or network.hint(runner.hosts)
    )
    if not hint:
        return first
    return replace(first, error=replace(first.error, message=first.error.message + hint))


def _frame_files(value: Any) -> set[str]:
    """Every file named in a run's frames (its error's, the tracer's diagnosis's)."""
    if isinstance(value, dict):
        out: set[str] = set()
        for key, item in value.items():
            if key.endswith("frames") and isinstance(item, (list, tuple)):
                out |= {str(f[0]) for f in item if isinstance(f, (list, tuple)) and f}
            else:
                out |= _frame_files(item)
        return out
    if isinstance(value, list):
        return set().union(*(_frame_files(v) for v in value))
    return set()


def _adopt(project: Project, runner: Runner, first: RunResult, cwd: Path) -> None:
    """Files under the root the first run's error or diagnosis went through that the
    imports did not name (a module found through ``sys.path.insert(0, '../lib')``): the
    user's code too, so the diagnosis names their lines and the repair may edit them."""
    runs = [first, *([first.past] if first.past is not None else [])]
    named: set[str] = set()
    for run in runs:
        named |= {f for f, _ in (run.error.frames if run.error else ())}
        named |= {f for f, _ in run.forward_frames}
        named |= _frame_files(run.diagnosis) | _frame_files(run.conflict_diagnosis)
    for rel in sorted(named - set(project.sources)):
        path = project.root / rel
        if os.path.isabs(rel) or not rel.endswith(".py") or not path.is_file():
            continue
        real = path.resolve()
        if not real.is_relative_to(project.root) or is_library(real):
            continue
        if SKIP_DIRS.intersection(real.relative_to(project.root).parts):
            continue
        try:
            src = _read_source(path, _shown(path, cwd))
        except BadInput:
            continue
        project.adopt(rel, src)
        runner.encodings = {**runner.encodings, rel: src.encoding}


_MISSING = re.compile(r"No such file or directory: '(?P<path>[^']+)'")


def _root_hint(error: ErrorInfo, root: Path, cwd: Path) -> str:
    """A file the script opens relative to the current directory, run from above the
    project root, is missing in the trial (whose folder is the root's copy): say which
    ``--root`` makes it exist, in the same one line."""
    match = _MISSING.search(error.message)
    here = cwd.resolve()
    if match is None or here.is_relative_to(root):
        return ""
    path = match.group("path")
    if os.path.isabs(path) or not (here / path).exists():
        return ""
    common = Path(os.path.commonpath([here, root]))
    return (
        f" (trials run in a copy of {_shown(root, cwd)}/; {path} is found from the current "
        f"directory: rerun with --root {_shown(common, cwd)})"
    )


def _outside_hint(error: ErrorInfo, root: Path, cwd: Path) -> str:
    """A module the script finds through a path relative to its copy (``'../lib'``),
    which exists beside the user's project but not beside the trial's copy: where it is,
    and the ``--root`` that brings it in."""
    if error.type != "ModuleNotFoundError" or not error.found:
        return ""
    found = Path(error.found)
    name = re.search(r"No module named '([^']+)'", error.message)
    what = name.group(1) if name else "the module"
    return (
        f" ({what} is found in {_shown(found, cwd)}/, outside the project root "
        f"{_shown(root, cwd)}/ that trials copy: {_root_for(found, root, cwd)})"
    )


def _root_for(path: Path, root: Path, cwd: Path) -> str:
    """What brings ``path`` into the project: the ``--root`` that holds both, as the user
    types it (none where only the file system's root does)."""
    common = Path(os.path.commonpath([path.resolve(), root]))
    if common == Path(common.anchor):
        return "no folder but the file system's root holds both, and trials cannot copy that"
    return f"rerun with --root {_shown(common, cwd)}"


def _module_hint(error: ErrorInfo, options: Options) -> str:
    """A package's module run as a file fails at its relative import, as it does under
    ``python pkg/train.py``: name the ``-m`` command that runs it as its users do."""
    if options.module or "attempted relative import with no known parent package" not in (
        error.message
    ):
        return ""
    found = module_name(options.script, options.cwd)
    if found is None:
        return ""
    name, base = found
    where = "" if base == options.cwd.resolve() else f"cd {_shown(base, options.cwd)} && "
    args = f" -- {shlex.join(options.args)}" if options.args else ""
    return (
        f" ({_shown(options.script.resolve(), options.cwd)} is the module {name} of a package: "
        f"run it as `python -m {name}` does, with `{where}autoclone fix -m {name}{args}`)"
    )


def outer_advice(frames: Sequence[Frame | None], options: Options) -> str:
    """When the first located line (the write, else the view, else the save) is in the
    user's code outside the project root: that it is, and the ``--root`` that brings it
    in; else ""."""
    frame = next((f for f in frames if f), None)
    if frame is None or not str(frame[0]).startswith("../"):  # only those are named so
        return ""
    root = project_root(options)
    path = Path(os.path.normpath(root / frame[0]))
    return (
        f"{_shown(path, options.cwd)}:{frame[1]} is outside the project root "
        f"{_shown(root, options.cwd)}/, and autoclone edits only files under it: "
        f"{_root_for(path, root, options.cwd)} to repair it there"
    )
