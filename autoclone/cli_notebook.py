"""``fix`` and ``explain`` on a notebook: progress and report told in its cells.

Split out of ``autoclone.cli`` to keep that module short. The repair runs on the
script made from the notebook; these read the notebook again to say where in it each
line is, and check that a fixed notebook is the program that was verified.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from autoclone import notebook as nbk
from autoclone import report as rp
from autoclone.session import Options


def progress_in_cells(options: Options) -> Options:
    """Progress lines about a notebook name its cells, not the script autoclone runs."""
    try:
        view = notebook_view(options)
    except (nbk.NotebookError, OSError, ValueError):
        return options  # the repair says what is wrong with it, in one line
    if view is None:
        return options
    say = options.progress
    return replace(options, progress=lambda m: say(view.text(m)))


def notebook_view(options: Options) -> nbk.View | None:
    """How a notebook's repair is shown; None for a script (or a notebook the repair
    already refused). Raises ``NotebookError`` or ``OSError`` if it cannot be read now."""
    if not nbk.is_notebook(options.script):
        return None
    root = options.root or options.script.resolve().parent
    return nbk.View.of(options.script, root, options.cwd)


def in_cells(report: rp.Report, options: Options) -> tuple[nbk.View | None, str | None]:
    """A notebook's report told in cells (read again: the repair ran on its script)."""
    if report.status == rp.BAD_INPUT or not nbk.is_notebook(options.script):
        return None, None
    try:
        view = notebook_view(options)
    except (nbk.NotebookError, OSError, ValueError) as exc:
        report.status, report.summary = rp.UNFIXABLE, f"{options.script}: {exc}"
        return None, None
    if view is None:
        return None, None
    report, verified = nbk.translate(report, view)
    return view, verified


def only_a_notebook_that_validates(report: rp.Report, view: nbk.View, verified: str | None) -> None:
    """The invariant for a notebook: ``fixed`` only with a notebook text that validates,
    changes nothing but code cells' sources, and makes the program that was verified."""
    if report.status != rp.FIXED:
        return
    problem = nbk.check_report(report, view, verified, Path.cwd())
    if problem is not None:
        report.status = rp.UNFIXABLE
        report.summary = f"the verified patch is not offered: {problem}"
        report.notes.append("no file was changed")
