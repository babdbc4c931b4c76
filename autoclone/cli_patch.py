"""The last checks on ``fix``'s outcome before a patch is printed or written, and the write.

Split out of ``autoclone.cli`` to keep that module short. ``fixed`` is said only of a
patch that applies where the user stands and gives exactly the verified files; an
error outside the project root is told with the ``--root`` that brings it in.
"""

from __future__ import annotations

import os
from pathlib import Path

from autoclone import report as rp
from autoclone.patch import PatchError, check_patch, link_out_of, write_files
from autoclone.session import Options, outer_advice, user_root


def only_a_patch_that_applies(report: rp.Report, dry_run: bool) -> None:
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


def outside_the_root(report: rp.Report, options: Options) -> None:
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


def apply(report: rp.Report, options: Options) -> None:
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
