"""The command line: parse, validate, call the library, map the outcome to an exit code.

stdout carries only the result (the diff with ``--dry-run``, or one JSON object with
``--format json``); progress, diagnosis and summary go to stderr. Exit codes: 0 fixed
or nothing to fix, 1 could not fix, 2 bad input or usage.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from autoclone import report as rp
from autoclone.explain import explain_script
from autoclone.patch import PatchError, write_files
from autoclone.repair import repair
from autoclone.session import Options

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


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _overrides(values: list[str]) -> dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise typer.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--set")
        out[name] = value
    return out


@app.callback()
def _root() -> None:
    """autoclone: repair PyTorch scripts that crash in autograd."""


@app.command()
def fix(
    path: Annotated[Path, typer.Argument(help="The script to repair.", show_default=False)],
    script_args: Annotated[
        list[str] | None, typer.Argument(help="Arguments for the script, after --.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the patch; write nothing.")
    ] = False,
    fmt: Annotated[Format, typer.Option("--format", help="text or json on stdout.")] = Format.text,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds allowed for each run.")] = 120.0,
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
    budget: Annotated[float, typer.Option(min=1.0, help="Seconds for the whole search.")] = 900.0,
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
) -> None:
    """Find and verify a minimal set of .clone() edits; write them (or print with --dry-run)."""
    options = Options(
        script=path,
        args=tuple(script_args or ()),
        steps=steps,
        timeout=timeout,
        device=device.value,
        overrides=_overrides(set_ or []),
        root=root,
        budget=budget,
        shrink=shrink,
        progress=lambda m: _err(f"autoclone: {m}"),
    )
    if jobs is not None:
        options = replace(options, jobs=jobs)
    report = repair(options)
    if report.status == rp.FIXED and not dry_run:
        _apply(report)
    _emit(report, fmt, dry_run)
    raise typer.Exit(report.exit_code)


@app.command()
def explain(
    path: Annotated[Path, typer.Argument(help="The script to explain.", show_default=False)],
    script_args: Annotated[
        list[str] | None, typer.Argument(help="Arguments for the script, after --.")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="text or json on stdout.")] = Format.text,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds allowed for the run.")] = 120.0,
    device: Annotated[Device, typer.Option(help="auto, cpu or cuda.")] = Device.auto,
    root: Annotated[
        Path | None, typer.Option(help="Project root (default: the script's folder).")
    ] = None,
) -> None:
    """Run once under the autograd tracer and say which line saved and which line wrote."""
    options = Options(
        script=path,
        args=tuple(script_args or ()),
        timeout=timeout,
        device=device.value,
        root=root,
        progress=lambda m: _err(f"autoclone: {m}"),
    )
    result = explain_script(options)
    if fmt is Format.json:
        print(json.dumps(result.as_json(), indent=2))
    elif result.text:
        print(result.text)
        print("\n".join(result.editor))
    if result.status == rp.BAD_INPUT:
        _err(f"autoclone: error: {result.summary}")
    else:
        cost = f"[{result.runs} run(s), {result.seconds:.1f} s]"
        _err(f"autoclone: {result.status}: {result.summary}  {cost}")
    raise typer.Exit(result.exit_code)


def _apply(report: rp.Report) -> None:
    try:
        write_files(report.changes)
    except (PatchError, OSError) as exc:
        report.status = rp.UNFIXABLE
        report.summary = f"the verified patch was not written: {exc}"
        report.notes.append("no file was changed")


def _emit(report: rp.Report, fmt: Format, dry_run: bool) -> None:
    if fmt is Format.json:
        print(json.dumps(report.as_json(), indent=2))
    elif dry_run and report.patch:
        sys.stdout.flush()
        sys.stdout.buffer.write(report.patch_bytes)  # bytes: git applies it to any encoding
        sys.stdout.buffer.flush()
    if report.explanation:
        _err(report.explanation)
    for note in report.notes:
        _err(f"note: {note}")
    if report.status == rp.BAD_INPUT:
        _err(f"autoclone: error: {report.summary}")
    else:
        written = " (written)" if report.status == rp.FIXED and not dry_run else ""
        _err(
            f"autoclone: {report.status}: {report.summary}{written}  "
            f"[{report.runs} runs, {report.candidates} candidates, {report.seconds:.1f} s]"
        )


def main(argv: list[str] | None = None) -> int:
    """Entry point: the exit code is the contract (0 fixed/nothing to do, 1 not fixed, 2 usage)."""
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="autoclone", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.TyperException as exc:
        _err(f"autoclone: error: {exc.format_message()}")
        return 2
    except typer.Abort:
        _err("autoclone: aborted")
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug of ours must still end in one line
        _err(f"autoclone: internal error, please report it: {type(exc).__name__}: {exc}")
        return 1
    return code if isinstance(code, int) else 0
