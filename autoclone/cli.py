"""The command line: parse, validate, call the library, map the outcome to an exit code.

stdout carries only the result (the diff with ``--dry-run``, or one JSON object with
``--format json``); progress, diagnosis and summary go to stderr. Exit codes: 0 fixed
or nothing to fix, 1 could not fix, 2 bad input or usage, 128 + N after signal N
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), each with one line on stderr.

The options and help text are in ``cli_options``, the two streams in ``cli_output``,
the checks and the write of a patch in ``cli_patch``, notebooks in ``cli_notebook``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from autoclone import __version__, batch, config, github, lifecycle, progress, sarif
from autoclone import notebook as nbk
from autoclone import report as rp
from autoclone.cli_notebook import (
    in_cells,
    notebook_view,
    only_a_notebook_that_validates,
    progress_in_cells,
)
from autoclone.cli_options import LONGEST as LONGEST  # re-exported, as before the split
from autoclone.cli_options import (
    AllowNetworkOption,
    AllowOutsideOption,
    Device,
    Format,
    Launcher,
    LauncherOption,
    ModuleOption,
    NprocOption,
    VerboseOption,
    check_budget,
    check_launcher,
    check_timeout,
    fix_help,
    parse_overrides,
)
from autoclone.cli_options import kind_summary as kind_summary  # re-exported: tests use it
from autoclone.cli_output import OutputError, err, hold_standard_fds, need_stdout, out
from autoclone.cli_patch import apply, only_a_patch_that_applies, outside_the_root
from autoclone.explain import explain_script
from autoclone.repair import repair
from autoclone.session import (
    BadInput,
    Options,
    dry_run_refusal,
    editor_paths,
    find_module,
    outer_advice,
    project_root,
)

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Repair PyTorch scripts that crash in autograd with a minimal, verified patch.",
)


def _show_version(value: bool) -> None:
    if value:
        out(f"autoclone {__version__}\n")
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


@app.command(help=fix_help())
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
        float, typer.Option(callback=check_timeout, help="Seconds allowed for each run.")
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
        float, typer.Option(callback=check_budget, help="Seconds for the whole search.")
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
    allow_network: AllowNetworkOption = False,
    patch_file: Annotated[Path | None, typer.Option(hidden=True)] = None,
) -> None:
    """Repair the scripts; the help text is ``fix_help()``."""
    check_launcher(launcher, nproc)
    paths = paths or []
    script = _module_script(module, paths) if module is not None else _first(paths)
    options = Options(
        script=script,
        module=module or "",
        args=_script_args(ctx),
        steps=steps,
        timeout=timeout,
        device=device.value,
        overrides=parse_overrides(set_ or []),
        root=root,
        budget=budget,
        shrink=shrink,
        launcher=launcher.value,
        nproc=nproc,
        allow_outside_writes=allow_outside_writes,
        allow_network=allow_network,
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
        err(f"autoclone: error: {exc}")
        raise typer.Exit(2) from exc


def _script_args(ctx: typer.Context) -> tuple[str, ...]:
    """The arguments after ``--``, which ``main`` took off before parsing (a click
    positional list would swallow the second script of ``fix a.py b.py``)."""
    return tuple(ctx.obj) if isinstance(ctx.obj, tuple) else ()


def _fix_one(
    options: Options, fmt: Format, dry_run: bool, shown: bool, patch_file: Path | None
) -> int:
    """One script, in this process: repair, check, write (or print), report."""
    with progress.for_stderr(enabled=shown, write=err) as display:
        options = progress_in_cells(replace(options, progress=display.say))
        if dry_run or fmt is Format.json:
            need_stdout()
        refusal = dry_run_refusal(options) if dry_run else None
        report = rp.Report(rp.BAD_INPUT, refusal) if refusal else repair(options)
    outside_the_root(report, options)
    view, verified = in_cells(report, options)
    if view is not None:
        only_a_notebook_that_validates(report, view, verified)
    else:
        only_a_patch_that_applies(report, dry_run)
    if report.status == rp.FIXED and not dry_run:
        with lifecycle.deferred("the patch was written", then_finish=True):
            apply(report, options)
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
        err(f"autoclone: error: {exc}")
        return 2
    mode = batch.CHECK if check else batch.DRY_RUN if dry_run else batch.WRITE
    if fmt in (Format.json, Format.sarif) or mode == batch.DRY_RUN:
        need_stdout()
    job = batch.Batch(tuple(scripts), options, mode)
    with progress.for_stderr(enabled=shown, write=err) as display:

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
        need_stdout()
    with progress.for_stderr(enabled=shown, write=err) as display:
        report = repair(replace(options, progress=lambda m: display.say(m, options.module)))
        outside_the_root(report, options)
        only_a_patch_that_applies(report, dry_run=False)
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
        out("".join(json.dumps(o.as_json(check=check)) + "\n" for o in outcomes))
    elif fmt is Format.github:
        out("".join(line + "\n" for o in outcomes for line in _annotations(o, options)))
    elif fmt is Format.sarif:
        found = [(o.report, *_from_here(o, options), o.last_line) for o in outcomes]
        out(sarif.dumps(sarif.checked(found, options.cwd)))
    elif mode == batch.DRY_RUN and batch.combined_patch(outcomes):
        out(batch.combined_patch(outcomes))
    err(batch.table(outcomes))
    err(f"autoclone: {batch.totals(outcomes, mode)}")
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
        float, typer.Option(callback=check_timeout, help="Seconds allowed for the run.")
    ] = 120.0,
    device: Annotated[Device, typer.Option(help="auto, cpu or cuda.")] = Device.auto,
    root: Annotated[
        Path | None, typer.Option(help="Project root (default: the script's folder).")
    ] = None,
    verbose: VerboseOption = False,
    launcher: LauncherOption = Launcher.none,
    nproc: NprocOption = 1,
    allow_outside_writes: AllowOutsideOption = False,
    allow_network: AllowNetworkOption = False,
) -> None:
    """Run once under the autograd tracer and say which line saved and which line wrote."""
    check_launcher(launcher, nproc)
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
        allow_network=allow_network,
    )
    need_stdout()
    with progress.for_stderr(enabled=fmt is Format.text or verbose, write=err) as display:
        options = progress_in_cells(replace(options, progress=display.say))
        result = explain_script(options)
    view = notebook_view(options) if result.status != rp.BAD_INPUT else None
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
        out(json.dumps(nbk.explain_json(data, view) if view else data, indent=2) + "\n")
    elif fmt is Format.github:
        out("".join(line + "\n" for line in github.from_editor_lines(result.editor)))
    elif fmt is Format.sarif:
        out(sarif.dumps(sarif.explained(result, options.cwd)))
    elif result.text:
        out(result.text + "\n" + "\n".join(result.editor) + "\n")
    if result.status == rp.BAD_INPUT:
        err(f"autoclone: error: {result.summary}")
    else:
        cost = f"[{result.runs} run(s), {result.seconds:.1f} s]"
        err(f"autoclone: {result.status}: {result.summary}  {cost}")
    raise typer.Exit(result.exit_code)


def _emit(report: rp.Report, fmt: Format, dry_run: bool, view: nbk.View | None = None) -> None:
    if fmt is Format.json:
        data = report.as_json()
        out(json.dumps(nbk.json_report(data, view) if view else data, indent=2) + "\n")
    elif dry_run and report.patch:
        out(report.patch_bytes)  # bytes: git applies it to any encoding
    written = report.status == rp.FIXED and not dry_run
    cost = f"[{report.runs} runs, {report.candidates} candidates, {report.seconds:.1f} s]"
    for line in _ending(report.status, report.summary, report.explanation, report.notes,
                        cost, written):  # fmt: skip
        err(line)


def _stopped(exc: lifecycle.Interrupted) -> int:
    err(f"autoclone: {exc.word}; {exc.done or 'nothing written'}")
    return exc.exit_code


def main(argv: list[str] | None = None) -> int:
    """Entry point: the exit code is the contract (0 fixed/nothing to do, 1 not fixed,
    2 usage, 128 + N after signal N), and every ending is one line on stderr."""
    hold_standard_fds()
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
        err(f"autoclone: error: {exc}")
        return 2
    try:
        code = command.main(args=own, prog_name="autoclone", standalone_mode=False,
                            obj=script_args, default_map=defaults)  # fmt: skip
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.TyperException as exc:
        err(f"autoclone: error: {exc.format_message()}")
        return 2
    except OutputError as exc:
        err(f"autoclone: error: {exc}")
        return 2
    except typer.Abort:  # click's own Ctrl-C, before our handler was in place
        err("autoclone: interrupted; nothing written")
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug of ours must still end in one line
        err(f"autoclone: internal error, please report it: {type(exc).__name__}: {exc}")
        return 1
    return code if isinstance(code, int) else 0
