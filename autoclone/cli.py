"""The command line: parse, validate, call the library, map the outcome to an exit code.

stdout carries only the result (the diff with ``--dry-run``, or one JSON object with
``--format json``); progress, diagnosis and summary go to stderr. Exit codes: 0 fixed
or nothing to fix, 1 could not fix, 2 bad input or usage, 128 + N after signal N
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), each with one line on stderr.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import sys
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from autoclone import __version__, batch, config, fixes, github, lifecycle, progress, sarif
from autoclone import notebook as nbk
from autoclone import report as rp
from autoclone.explain import explain_script
from autoclone.patch import PatchError, check_patch, link_out_of, write_files
from autoclone.repair import repair
from autoclone.session import (
    BadInput,
    Options,
    dry_run_refusal,
    editor_paths,
    find_module,
    outer_advice,
    project_root,
    user_root,
)

#: The longest --timeout / --budget accepted: a week is longer than any trial should take,
#: and far below what select() and time_t can represent.
LONGEST = 7 * 24 * 3600.0

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Repair PyTorch scripts that crash in autograd with a minimal, verified patch.",
)


class Device(str, Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


class Format(str, Enum):
    text = "text"
    json = "json"
    github = "github"  # workflow commands: explain, and fix --check
    sarif = "sarif"  # one SARIF 2.1.0 log: explain, and fix --check


class Launcher(str, Enum):
    none = "none"
    torchrun = "torchrun"


def _err(message: str) -> None:
    """One line on stderr; a closed or hung-up terminal must not turn it into a crash."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(message, file=sys.stderr, flush=True)


class OutputError(Exception):
    """stdout is closed, full or gone: the result could not be delivered."""


def _timeout(value: float) -> float:
    return _check_seconds("--timeout", value, 0.1)


def _budget(value: float) -> float:
    return _check_seconds("--budget", value, 1.0)


def _check_seconds(name: str, value: float, lowest: float) -> float:
    """inf, nan and 1e30 pass a plain range check but no timer can wait that long."""
    if not math.isfinite(value) or not lowest <= value <= LONGEST:
        raise typer.BadParameter(
            f"expected seconds from {lowest:g} to {LONGEST:g} (a week), got {value:g}",
            param_hint=name,
        )
    return value


def _overrides(values: list[str]) -> dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise typer.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--set")
        out[name] = value
    return out


def _show_version(value: bool) -> None:
    if value:
        _out(f"autoclone {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """autoclone: repair PyTorch scripts that crash in autograd."""


def _drop_asides(text: str) -> str:
    """Remove parenthesised asides (`` (a GAN's ...)``), keeping calls like ``f(x)``."""
    depth, out = 0, []
    for i, c in enumerate(text):
        if depth == 0 and c == "(" and text[i - 1 : i] == " ":
            depth = 1
        elif depth:
            depth += (c == "(") - (c == ")")
        else:
            out.append(c)
    return "".join(out)


def kind_summary(doc: str) -> str:
    """The first clause of a fix kind's module docstring, as one short help line: the
    docstrings are the one description of each kind, so the help cannot drift from them."""
    text = " ".join(doc.split("\n\n")[0].replace("``", "").split())
    text = re.sub(r"\s+([,.:)])", r"\1", " ".join(_drop_asides(text).split()))
    parts = re.split(r": |\. ", text)
    line = parts[0] if len(parts[0]) >= 30 or len(parts) == 1 else f"{parts[0]}: {parts[1]}"
    return line.strip().rstrip(".")


def _fix_help() -> str:
    """``fix --help``: what it does and every fix kind, one line each (``\\b`` keeps
    click from re-wrapping the list)."""
    kinds = [
        f"  {k.name:<15} {kind_summary(sys.modules[type(k).__module__].__doc__ or '')}"
        for k in fixes.KINDS
    ]
    return (
        "Find, verify and write a minimal patch (print it with --dry-run). The error's "
        "evidence picks the fix kinds; each edit is verified by a real run.\n\n"
        "\b\nFix kinds, in the order they are consulted:\n" + "\n".join(kinds)
    )


#: Options ``fix`` and ``explain`` share, as typer annotations.
LauncherOption = Annotated[
    Launcher,
    typer.Option(help="none, or torchrun: every run is launched by torch.distributed.run."),
]
NprocOption = Annotated[
    int, typer.Option(min=1, help="Processes per run (with --launcher torchrun).")
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Progress on stderr with --format json too.")
]
ModuleOption = Annotated[
    str | None,
    typer.Option(
        "-m",
        "--module",
        help="Run a package's module as `python -m MODULE` runs it (from the current "
        "directory, which is then the default project root); its arguments after --.",
        show_default=False,
    ),
]
AllowOutsideOption = Annotated[
    bool,
    typer.Option(
        "--allow-outside-writes",
        help="Where trials cannot be isolated (no user namespaces), let them write outside "
        "the project for real instead of stopping at the first such write.",
    ),
]


@app.command(help=_fix_help())
def fix(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Scripts, or folders: the .py files directly in a folder that look like "
            "scripts (top-level code or a __main__ block). Arguments after -- go to every "
            "script.",
            metavar="PATH...",
            show_default=False,
        ),
    ] = None,
    module: ModuleOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the patch; write nothing.")
    ] = False,
    fmt: Annotated[
        Format, typer.Option("--format", help="text, json, github or sarif (those two: --check).")
    ] = Format.text,
    timeout: Annotated[
        float, typer.Option(callback=_timeout, help="Seconds allowed for each run.")
    ] = 120.0,
    steps: Annotated[
        int, typer.Option(min=1, help="Backward calls past the first error a trial must survive.")
    ] = 3,
    device: Annotated[Device, typer.Option(help="auto, cpu or cuda.")] = Device.auto,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="NAME=VALUE for trials only.")
    ] = None,
    root: Annotated[
        Path | None, typer.Option(help="Project root (default: the script's folder).")
    ] = None,
    budget: Annotated[
        float, typer.Option(callback=_budget, help="Seconds for the whole search.")
    ] = 900.0,
    shrink: Annotated[
        bool | None,
        typer.Option(
            "--shrink/--no-shrink",
            help="Shrink epochs and sizes for trials (default: when a full-size run is slow).",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="Trials at once (default: cores, up to 4, for slow trials)."
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="For CI: write and print no patch; exit 1 if any script has an autograd "
            "error (or could not be checked in time).",
        ),
    ] = False,
    verbose: VerboseOption = False,
    launcher: LauncherOption = Launcher.none,
    nproc: NprocOption = 1,
    allow_outside_writes: AllowOutsideOption = False,
    patch_file: Annotated[Path | None, typer.Option(hidden=True)] = None,
) -> None:
    """Repair the scripts; the help text is ``_fix_help()``."""
    _check_launcher(launcher, nproc)
    paths = paths or []
    script = _module_script(module, paths) if module is not None else _first(paths)
    options = Options(
        script=script,
        module=module or "",
        args=_script_args(ctx),
        steps=steps,
        timeout=timeout,
        device=device.value,
        overrides=_overrides(set_ or []),
        root=root,
        budget=budget,
        shrink=shrink,
        launcher=launcher.value,
        nproc=nproc,
        allow_outside_writes=allow_outside_writes,
    )
    if jobs is not None:
        options = replace(options, jobs=jobs)
    shown = fmt is Format.text or verbose
    if fmt in (Format.github, Format.sarif) and not check:
        what = "github annotations are" if fmt is Format.github else "a SARIF log is"
        raise typer.BadParameter(f"{what} for explain and fix --check", param_hint="--format")
    if module is not None and check:
        raise typer.Exit(_check_module(options, fmt, shown))
    if module is None and (check or len(paths) > 1 or paths[0].is_dir()):
        raise typer.Exit(_fix_many(paths, options, fmt, dry_run, check, shown))
    raise typer.Exit(_fix_one(options, fmt, dry_run, shown, patch_file))


def _first(paths: list[Path]) -> Path:
    if not paths:
        raise typer.BadParameter("give a script or folder, or -m MODULE", param_hint="PATH...")
    return paths[0]


def _module_script(module: str, paths: list[Path]) -> Path:
    """The file ``-m module`` runs from here; a usage error (one line, exit 2) when there
    is none, or when paths were given too."""
    try:
        if paths:
            raise BadInput(
                f"-m {module} runs one module: give no script with it (its arguments go "
                "after --)"
            )
        return find_module(module, Path.cwd())
    except BadInput as exc:
        _err(f"autoclone: error: {exc}")
        raise typer.Exit(2) from exc


def _check_launcher(launcher: Launcher, nproc: int) -> None:
    """Several processes per run only make sense through a launcher that starts them."""
    if nproc > 1 and launcher is Launcher.none:
        raise typer.BadParameter(
            f"{nproc} processes need a launcher: add --launcher torchrun", param_hint="--nproc"
        )


def _script_args(ctx: typer.Context) -> tuple[str, ...]:
    """The arguments after ``--``, which ``main`` took off before parsing (a click
    positional list would swallow the second script of ``fix a.py b.py``)."""
    return tuple(ctx.obj) if isinstance(ctx.obj, tuple) else ()


def _fix_one(
    options: Options, fmt: Format, dry_run: bool, shown: bool, patch_file: Path | None
) -> int:
    """One script, in this process: repair, check, write (or print), report."""
    with progress.for_stderr(enabled=shown, write=_err) as display:
        options = _progress_in_cells(replace(options, progress=display.say))
        if dry_run or fmt is Format.json:
            _need_stdout()
        refusal = dry_run_refusal(options) if dry_run else None
        report = rp.Report(rp.BAD_INPUT, refusal) if refusal else repair(options)
    _outside_the_root(report, options)
    view, verified = _in_cells(report, options)
    if view is not None:
        _only_a_notebook_that_validates(report, view, verified)
    else:
        _only_a_patch_that_applies(report, dry_run)
    if report.status == rp.FIXED and not dry_run:
        with lifecycle.deferred("the patch was written", then_finish=True):
            _apply(report, options)
    lifecycle.finish()  # the outcome is decided: a signal now would only misreport it
    if patch_file is not None and dry_run and report.status == rp.FIXED:
        patch_file.write_bytes(report.patch_bytes)  # a batch's exact bytes (batch.py)
    _emit(report, fmt, dry_run, view)
    return report.exit_code


def _fix_many(
    paths: list[Path], options: Options, fmt: Format, dry_run: bool, check: bool, shown: bool
) -> int:
    """Several scripts (or ``--check``), each repaired by its own ``fix`` (batch.py):
    each one's ending as it comes, then the table; JSON Lines or the diffs on stdout."""
    try:
        scripts = batch.find_scripts(paths)
    except batch.NoScripts as exc:
        _err(f"autoclone: error: {exc}")
        return 2
    mode = batch.CHECK if check else batch.DRY_RUN if dry_run else batch.WRITE
    if fmt in (Format.json, Format.sarif) or mode == batch.DRY_RUN:
        _need_stdout()
    job = batch.Batch(tuple(scripts), options, mode)
    with progress.for_stderr(enabled=shown, write=_err) as display:

        def ended(outcome: batch.Outcome) -> None:
            display.done(str(outcome.path))
            display.show("\n".join(_ending_of(outcome, mode)))

        outcomes = batch.run(job, lambda path, m: display.say(m, str(path)), ended)
    lifecycle.finish()
    return _outcomes(outcomes, options, fmt, mode, check)


def _check_module(options: Options, fmt: Format, shown: bool) -> int:
    """``fix -m MODULE --check``: the module repaired here, in this process (a batch's
    scripts each get a ``fix`` of their own, which takes paths), and told as a batch of
    one: the same lines, table, JSON Lines, annotations or SARIF log."""
    if fmt in (Format.json, Format.sarif):
        _need_stdout()
    with progress.for_stderr(enabled=shown, write=_err) as display:
        report = repair(replace(options, progress=lambda m: display.say(m, options.module)))
        _outside_the_root(report, options)
        _only_a_patch_that_applies(report, dry_run=False)
        name = Path(os.path.relpath(options.script.absolute(), options.cwd.absolute()))
        outcome = batch.Outcome(name, report.exit_code, report.seconds, report.as_json(),
                                f"autoclone: {report.status}: {report.summary}")  # fmt: skip
        display.done(options.module)
        display.show("\n".join(_ending_of(outcome, batch.CHECK)))
    lifecycle.finish()
    return _outcomes([outcome], options, fmt, batch.CHECK, True)


def _outcomes(
    outcomes: list[batch.Outcome], options: Options, fmt: Format, mode: str, check: bool
) -> int:
    """What a batch prints once every script has ended; its exit code."""
    if fmt is Format.json:
        _out("".join(json.dumps(o.as_json(check=check)) + "\n" for o in outcomes))
    elif fmt is Format.github:
        _out("".join(line + "\n" for o in outcomes for line in _annotations(o, options)))
    elif fmt is Format.sarif:
        found = [(o.report, *_from_here(o, options), o.last_line) for o in outcomes]
        _out(sarif.dumps(sarif.checked(found, options.cwd)))
    elif mode == batch.DRY_RUN and batch.combined_patch(outcomes):
        _out(batch.combined_patch(outcomes))
    _err(batch.table(outcomes))
    _err(f"autoclone: {batch.totals(outcomes, mode)}")
    return batch.worst(outcomes, check=check)


def _annotations(outcome: batch.Outcome, options: Options) -> list[str]:
    """One script's ``--check`` finding as a GitHub workflow command, paths from here."""
    return github.for_check(outcome.report, *_from_here(outcome, options), outcome.last_line)


def _from_here(outcome: batch.Outcome, options: Options) -> tuple[str, Path]:
    """One script of ``--check`` and its project root, as paths from where the command
    ran (annotations and SARIF name files from there)."""
    cwd = options.cwd.resolve()
    root = project_root(replace(options, script=outcome.path))
    shown = Path(os.path.relpath(root, cwd))
    return Path(os.path.relpath(outcome.path.resolve(), cwd)).as_posix(), shown


def _ending_of(outcome: batch.Outcome, mode: str) -> list[str]:
    """What ``fix`` alone prints on stderr at its end, for one script of several."""
    data, name = outcome.report, outcome.path
    if data is None:
        return [f"autoclone: {name}: {batch.ERROR}: {outcome.last_line or 'no report'}"]
    written = data["status"] == rp.FIXED and mode == batch.WRITE and outcome.exit_code == 0
    cost = f"[{data['runs']} runs, {data['candidates']} candidates, {data['seconds']:.1f} s]"
    return _ending(data["status"], data["summary"], data["explanation"], data["notes"],
                   cost, written, f"{name}: ")  # fmt: skip


def _ending(
    status: str,
    summary: str,
    explanation: str,
    notes: list[str],
    cost: str,
    written: bool,
    name: str = "",
) -> list[str]:
    """The explanation, the notes and the one-line outcome, as ``fix`` ends on stderr."""
    lines = [explanation] if explanation else []
    lines += [f"note: {note}" for note in notes]
    if status == rp.BAD_INPUT:
        return [*lines, f"autoclone: {name}error: {summary}"]
    shown = " (written)" if written else ""
    return [*lines, f"autoclone: {name}{status}: {summary}{shown}  {cost}"]


def _progress_in_cells(options: Options) -> Options:
    """Progress lines about a notebook name its cells, not the script autoclone runs."""
    try:
        view = _notebook_view(options)
    except (nbk.NotebookError, OSError, ValueError):
        return options  # the repair says what is wrong with it, in one line
    if view is None:
        return options
    say = options.progress
    return replace(options, progress=lambda m: say(view.text(m)))


def _notebook_view(options: Options) -> nbk.View | None:
    """How a notebook's repair is shown; None for a script (or a notebook the repair
    already refused). Raises ``NotebookError`` or ``OSError`` if it cannot be read now."""
    if not nbk.is_notebook(options.script):
        return None
    root = options.root or options.script.resolve().parent
    return nbk.View.of(options.script, root, options.cwd)


def _in_cells(report: rp.Report, options: Options) -> tuple[nbk.View | None, str | None]:
    """A notebook's report told in cells (read again: the repair ran on its script)."""
    if report.status == rp.BAD_INPUT or not nbk.is_notebook(options.script):
        return None, None
    try:
        view = _notebook_view(options)
    except (nbk.NotebookError, OSError, ValueError) as exc:
        report.status, report.summary = rp.UNFIXABLE, f"{options.script}: {exc}"
        return None, None
    if view is None:
        return None, None
    report, verified = nbk.translate(report, view)
    return view, verified


def _only_a_notebook_that_validates(
    report: rp.Report, view: nbk.View, verified: str | None
) -> None:
    """The invariant for a notebook: ``fixed`` only with a notebook text that validates,
    changes nothing but code cells' sources, and makes the program that was verified."""
    if report.status != rp.FIXED:
        return
    problem = nbk.check_report(report, view, verified, Path.cwd())
    if problem is not None:
        report.status = rp.UNFIXABLE
        report.summary = f"the verified patch is not offered: {problem}"
        report.notes.append("no file was changed")


@app.command()
def explain(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="The script to explain.", show_default=False)
    ] = None,
    script_args: Annotated[
        list[str] | None, typer.Argument(help="Arguments for the script, after --.")
    ] = None,
    module: ModuleOption = None,
    fmt: Annotated[
        Format,
        typer.Option("--format", help="text, json, github (workflow annotations) or sarif."),
    ] = Format.text,
    timeout: Annotated[
        float, typer.Option(callback=_timeout, help="Seconds allowed for the run.")
    ] = 120.0,
    device: Annotated[Device, typer.Option(help="auto, cpu or cuda.")] = Device.auto,
    root: Annotated[
        Path | None, typer.Option(help="Project root (default: the script's folder).")
    ] = None,
    verbose: VerboseOption = False,
    launcher: LauncherOption = Launcher.none,
    nproc: NprocOption = 1,
    allow_outside_writes: AllowOutsideOption = False,
) -> None:
    """Run once under the autograd tracer and say which line saved and which line wrote."""
    _check_launcher(launcher, nproc)
    given = [p for p in (path,) if p is not None]
    if module is not None:
        script = _module_script(module, [*given, *map(Path, script_args or ())])
    else:
        script = _first(given)
    options = Options(
        script=script,
        module=module or "",
        args=(*(script_args or ()), *_script_args(ctx)),
        timeout=timeout,
        device=device.value,
        root=root,
        launcher=launcher.value,
        nproc=nproc,
        allow_outside_writes=allow_outside_writes,
    )
    _need_stdout()
    with progress.for_stderr(enabled=fmt is Format.text or verbose, write=_err) as display:
        options = _progress_in_cells(replace(options, progress=display.say))
        result = explain_script(options)
    view = _notebook_view(options) if result.status != rp.BAD_INPUT else None
    if view is not None:
        result.text = "\n".join([view.text(result.text), *view.skipped()])
        result.summary = view.text(result.summary)
        result.editor = [view.editor(line) for line in result.editor]
    if result.diagnosis is not None:
        d = result.diagnosis
        advice = outer_advice([d.mutation, d.view, d.saved], options)
        if advice:
            result.text = "\n".join(filter(None, [result.text, f"Note: {advice}."]))
    result.editor = editor_paths(result.editor, options)
    lifecycle.finish()
    if fmt is Format.json:
        data = result.as_json()
        _out(json.dumps(nbk.explain_json(data, view) if view else data, indent=2) + "\n")
    elif fmt is Format.github:
        _out("".join(line + "\n" for line in github.from_editor_lines(result.editor)))
    elif fmt is Format.sarif:
        _out(sarif.dumps(sarif.explained(result, options.cwd)))
    elif result.text:
        _out(result.text + "\n" + "\n".join(result.editor) + "\n")
    if result.status == rp.BAD_INPUT:
        _err(f"autoclone: error: {result.summary}")
    else:
        cost = f"[{result.runs} run(s), {result.seconds:.1f} s]"
        _err(f"autoclone: {result.status}: {result.summary}  {cost}")
    raise typer.Exit(result.exit_code)


def _only_a_patch_that_applies(report: rp.Report, dry_run: bool) -> None:
    """The invariant: status ``fixed`` only with a non-empty diff that, applied where the
    user stands, gives exactly the verified files (a dry apply, byte for byte)."""
    if report.status != rp.FIXED:
        return
    # paths: the diff must apply from here when it is the output (--dry-run); when fix
    # writes the files itself, the diff only has to describe them
    problem = check_patch(report.patch_bytes, report.changes, Path.cwd(), paths=dry_run)
    if problem is None:
        return
    report.status = rp.UNFIXABLE
    if not report.summary.startswith("the verified patch"):
        report.summary = f"the verified patch is not offered: {problem}{_from_where(report)}"
    report.notes.append("no file was changed")


def _from_where(report: rp.Report) -> str:
    """Where a diff of files above the current directory (a module in ``../lib``) can be
    printed for ``git apply``: the folder that holds them all."""
    here = Path.cwd().resolve()
    files = [Path(os.path.realpath(src.path)) for src, _ in report.changes]
    if not files or all(f.is_relative_to(here) for f in files):
        return ""
    common = Path(os.path.commonpath([here, *files]))
    if common == Path(common.anchor):
        return "; without --dry-run it is written"
    shown = Path(os.path.relpath(common, here)).as_posix()
    return (
        f"; without --dry-run it is written (a diff git applies needs the command run from "
        f"{shown} or above)"
    )


def _outside_the_root(report: rp.Report, options: Options) -> None:
    """An error whose write (or view, or save) is in the user's code outside the project
    root, that no edit inside it repaired: say so, and which ``--root`` brings it in,
    as the outcome; what the search tried becomes a note."""
    if report.status != rp.UNFIXABLE:
        return
    found = report.diagnosis or {}
    frames = [found.get(k) for k in ("mutation", "view", "saved")]
    advice = outer_advice([(str(f[0]), int(f[1])) if f else None for f in frames], options)
    if not advice:
        return
    report.notes.append(f"no edit inside the project repaired it: {report.summary}")
    report.summary = f"{report.error_class}: {advice}"


def _apply(report: rp.Report, options: Options) -> None:
    refusal = link_out_of(user_root(options), report.changes)
    if refusal:
        report.status, report.summary = (
            rp.UNFIXABLE,
            f"the verified patch was not written: {refusal}",
        )
        return
    try:
        write_files(report.changes)
    except (PatchError, OSError) as exc:
        report.status = rp.UNFIXABLE
        report.summary = f"the verified patch was not written: {exc}"
        report.notes.append("no file was changed")


def _need_stdout() -> None:
    """The result goes to stdout: refuse to work for minutes only to lose it."""
    if sys.stdout is None:
        raise OutputError("stdout is closed; there is nowhere to print the result")


def _out(text: str | bytes) -> None:
    """Write the result; a closed, full or broken stdout becomes an ``OutputError``."""
    try:
        if sys.stdout is None:
            raise OSError("stdout is closed")
        if isinstance(text, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(text)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except (OSError, ValueError) as exc:
        _silence_stdout()
        raise OutputError(f"cannot write the result to stdout: {exc}") from exc


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit


def _emit(report: rp.Report, fmt: Format, dry_run: bool, view: nbk.View | None = None) -> None:
    if fmt is Format.json:
        data = report.as_json()
        _out(json.dumps(nbk.json_report(data, view) if view else data, indent=2) + "\n")
    elif dry_run and report.patch:
        _out(report.patch_bytes)  # bytes: git applies it to any encoding
    written = report.status == rp.FIXED and not dry_run
    cost = f"[{report.runs} runs, {report.candidates} candidates, {report.seconds:.1f} s]"
    for line in _ending(report.status, report.summary, report.explanation, report.notes,
                        cost, written):  # fmt: skip
        _err(line)


def _hold_standard_fds() -> None:
    """A standard descriptor closed by the caller (``>&-``) would be handed to the next
    file or pipe opened; hold it with /dev/null (``sys.stdout`` stays None: refused)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_RDWR)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)


def _stopped(exc: lifecycle.Interrupted) -> int:
    _err(f"autoclone: {exc.word}; {exc.done or 'nothing written'}")
    return exc.exit_code


def main(argv: list[str] | None = None) -> int:
    """Entry point: the exit code is the contract (0 fixed/nothing to do, 1 not fixed,
    2 usage, 128 + N after signal N), and every ending is one line on stderr."""
    _hold_standard_fds()
    restore = lifecycle.install()
    try:
        _die_with_batch()
        return _main(sys.argv[1:] if argv is None else argv)
    except lifecycle.Interrupted as exc:
        return _stopped(exc)
    finally:
        if argv is None:  # the process's own entry point: it exits next
            lifecycle.finish(until_exit=True)
        else:  # called in-process: give the caller its handlers back
            lifecycle.finish()
            restore()


def _die_with_batch() -> None:
    """A script's ``fix`` started by a batch (batch.py) ends as after SIGTERM, cleaning
    up, when the batch dies, even by ``kill -9``; its scripts' trials never see the mark."""
    parent = os.environ.pop(batch.PARENT_ENV, "")
    if parent.isdigit():
        lifecycle.die_with_parent(int(parent), signal.SIGTERM)


def _split_at_dashes(argv: list[str]) -> tuple[list[str], tuple[str, ...]]:
    """The arguments for the script(s) are everything after the first ``--``: taken off
    here, so that the positionals click sees are only paths (``fix a.py b.py``)."""
    if "--" not in argv:
        return argv, ()
    at = argv.index("--")
    return argv[:at], tuple(argv[at + 1 :])


def _main(argv: list[str]) -> int:
    command = typer.main.get_command(app)
    own, script_args = _split_at_dashes(argv)
    try:
        defaults = config.default_map(Path.cwd())
    except config.ConfigError as exc:
        _err(f"autoclone: error: {exc}")
        return 2
    try:
        code = command.main(args=own, prog_name="autoclone", standalone_mode=False,
                            obj=script_args, default_map=defaults)  # fmt: skip
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.TyperException as exc:
        _err(f"autoclone: error: {exc.format_message()}")
        return 2
    except OutputError as exc:
        _err(f"autoclone: error: {exc}")
        return 2
    except typer.Abort:  # click's own Ctrl-C, before our handler was in place
        _err("autoclone: interrupted; nothing written")
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug of ours must still end in one line
        _err(f"autoclone: internal error, please report it: {type(exc).__name__}: {exc}")
        return 1
    return code if isinstance(code, int) else 0
