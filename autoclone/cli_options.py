"""What the command line accepts: the option types ``fix`` and ``explain`` share, the
checks typer runs on their values, and ``fix``'s help text.

Split out of ``autoclone.cli`` to keep that module short; it holds what the commands
are declared with, ``cli`` what they do.
"""

from __future__ import annotations

import math
import re
import sys
from enum import Enum
from typing import Annotated

import typer

from autoclone import fixes

#: The longest --timeout / --budget accepted: a week is longer than any trial should take,
#: and far below what select() and time_t can represent.
LONGEST = 7 * 24 * 3600.0


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


def check_timeout(value: float) -> float:
    return _check_seconds("--timeout", value, 0.1)


def check_budget(value: float) -> float:
    return _check_seconds("--budget", value, 1.0)


def _check_seconds(name: str, value: float, lowest: float) -> float:
    """inf, nan and 1e30 pass a plain range check but no timer can wait that long."""
    if not math.isfinite(value) or not lowest <= value <= LONGEST:
        raise typer.BadParameter(
            f"expected seconds from {lowest:g} to {LONGEST:g} (a week), got {value:g}",
            param_hint=name,
        )
    return value


def parse_overrides(values: list[str]) -> dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise typer.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--set")
        out[name] = value
    return out


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


def fix_help() -> str:
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


def check_launcher(launcher: Launcher, nproc: int) -> None:
    """Several processes per run only make sense through a launcher that starts them."""
    if nproc > 1 and launcher is Launcher.none:
        raise typer.BadParameter(
            f"{nproc} processes need a launcher: add --launcher torchrun", param_hint="--nproc"
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
AllowNetworkOption = Annotated[
    bool,
    typer.Option(
        "--allow-network",
        help="Give trials the network: the script's posts, remote logging and pushes run "
        "for real in every trial (by default trials reach nothing beyond this machine).",
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
