"""``%autoclone`` in a Jupyter or IPython kernel: repair the cells as they were run.

A notebook user meets the autograd error in a kernel, with the notebook file possibly
unsaved and its cells run out of order; what crashed is the code the kernel ran, not the
file. So the program repaired is the kernel's input history (``In``), in execution order,
up to and including the cell that raised: each cell becomes one code cell of a notebook
that ``autoclone.notebook`` turns into a script, exactly as ``autoclone fix x.ipynb``
does (IPython lines kept by their tags, every script line mapped back to its cell), and
``repair`` verifies the patch. Positions in that notebook are translated back to the
kernel's execution counts, so the user reads ``cell [3], line 2`` as Jupyter labels it.

The repair runs in a temporary folder that stands for the kernel's working directory:
its top-level ``.py`` files are copied (the repair may edit a local module), everything
else is linked, so relative data paths resolve as in the kernel and nothing is copied
but source. Trials are isolated by autoclone as for any script; the kernel's own files
are never written.

``--apply`` puts the patched edited cells, in execution order, into one new cell below
(IPython's ``set_next_input``: Jupyter frontends insert one such cell per execution) and
does not run it: the kernel's state is the user's to change. Frontends that ignore that
payload (nbclient, nbconvert) get the diff and one line saying what to paste.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autoclone import notebook as nbk
    from autoclone import report as rp

#: The notebook of the kernel's cells, in the temporary folder (texts naming it are
#: translated to execution counts before the user sees them).
NAME = "autoclone_kernel_cells.ipynb"
#: A line of a cell that only loads or runs this extension: such cells are not code.
_OURS = re.compile(r"^(%(re)?load_ext\s+autoclone\b.*|%autoclone\b.*|#.*|)$")
_CELL = re.compile(rf"{re.escape(NAME)} cell (\d+)")
#: Names the temporary folder must not take from the kernel's folder.
_SKIPPED = {NAME, NAME + ".py", "__pycache__"}


class MagicError(Exception):
    """Something the user can fix (an option, the kernel's state); one line."""


@dataclass(frozen=True)
class Cell:
    """One executed cell: its execution count (``In[count]``) and its raw source."""

    count: int
    source: str


@dataclass(frozen=True)
class Args:
    """The magic's options."""

    apply: bool = False
    timeout: float = 120.0


@dataclass
class Repaired:
    """A repair of the kernel's cells, as shown and applied."""

    key: tuple[Any, ...]  # the cells and folder it was made for
    report: rp.Report
    cells: list[Cell]  # the program's cells; position p (from 1) is cells[p - 1]
    edited: dict[int, list[str]] = field(default_factory=dict)  # count -> patched lines
    old: dict[int, list[str]] = field(default_factory=dict)  # count -> lines as run
    modules: str = ""  # the git diff of local modules the patch edits too


@dataclass
class Kernel:
    """What the extension keeps in one kernel: which cells raised (seen from the moment
    it was loaded), and the last repair (``--apply`` reuses a verified one)."""

    shell: Any
    raised: dict[int, bool] = field(default_factory=dict)
    last: Repaired | None = None

    def record(self, result: Any) -> None:
        """``post_run_cell``: remember whether each cell raised, so that a cell that
        failed and was then fixed and run again is left out of the program."""
        count = getattr(result, "execution_count", None)
        if isinstance(count, int):
            self.raised[count] = not getattr(result, "success", True)

    def magic(self, line: str) -> None:
        """``%autoclone [--apply] [--timeout S]``: every ending is shown in lines, none
        of autoclone's own code ends in a traceback."""
        try:
            run(self, parse(line))
        except MagicError as exc:
            print(f"autoclone: error: {exc}")
        except KeyboardInterrupt:
            print("autoclone: interrupted; nothing applied")
        except Exception as exc:  # noqa: BLE001 - a bug of ours must still end in one line
            print(f"autoclone: internal error, please report it: {type(exc).__name__}: {exc}")


_KERNELS: dict[int, Kernel] = {}


def load(shell: Any) -> None:
    """Register ``%autoclone`` and the hook that sees cells raise (once per shell: a
    ``%reload_ext`` replaces both)."""
    old = _KERNELS.pop(id(shell), None)
    if old is not None:
        try:
            shell.events.unregister("post_run_cell", old.record)
        except ValueError:
            pass
    kernel = Kernel(shell, raised=old.raised if old else {})
    _KERNELS[id(shell)] = kernel
    shell.events.register("post_run_cell", kernel.record)
    shell.register_magic_function(kernel.magic, magic_kind="line", magic_name="autoclone")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would exit the kernel's process
        raise MagicError(f"{message} (usage: %autoclone [--apply] [--timeout S])")


def parse(line: str) -> Args:
    parser = _Parser(prog="%autoclone", add_help=False)
    parser.add_argument("--apply", action="store_true")
    parser.add_argument("--timeout", type=float, default=120.0)
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise MagicError(str(exc)) from exc
    ns = parser.parse_args(words)
    if not ns.timeout > 0:
        raise MagicError(f"--timeout must be a positive number of seconds, not {ns.timeout:g}")
    return Args(apply=ns.apply, timeout=ns.timeout)


# --------------------------------------------------------------------------- the cells


def history(shell: Any) -> list[Cell]:
    """The cells run before the one running the magic (IPython stores a cell's input
    under its count before running it, so that one is the last entry)."""
    manager = getattr(shell, "history_manager", None)
    raw = list(getattr(manager, "input_hist_raw", None) or [""])
    return [Cell(n, raw[n]) for n in range(1, len(raw) - 1)]


def ours(cell: Cell) -> bool:
    """A cell that only loads or runs autoclone (or is empty): not part of the program."""
    return all(_OURS.match(line.strip()) for line in cell.source.splitlines())


def raised(kernel: Kernel) -> dict[int, bool]:
    """Which cells raised: what the hook saw, else the last cell's result and the cell
    that the last traceback went through (cells run before the extension was loaded)."""
    known: dict[int, bool] = {}
    last = getattr(kernel.shell, "last_execution_result", None)
    count = getattr(last, "execution_count", None)
    if isinstance(count, int):
        known[count] = not getattr(last, "success", True)
    failed = _traceback_cell(kernel.shell)
    if failed is not None:
        known[failed] = True
    return {**known, **kernel.raised}


def _traceback_cell(shell: Any) -> int | None:
    """The execution count of the cell the last error was raised in (IPython names each
    cell's code file and maps it to its count); None when unknown."""
    names = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    tb = getattr(sys, "last_traceback", None)
    found = None
    while tb is not None:
        count = names.get(tb.tb_frame.f_code.co_filename)
        if isinstance(count, int):
            found = found or count
        tb = tb.tb_next
    return found


def program(kernel: Kernel) -> tuple[list[Cell], list[int]] | str:
    """The cells to repair, in execution order, up to the last cell run (which must have
    raised), and the earlier cells left out because they raised; else why not, in a line."""
    cells = [cell for cell in history(kernel.shell) if not ours(cell)]
    if not cells:
        return "autoclone: no cell has run in this kernel yet: nothing to repair"
    failed = raised(kernel)
    target = cells[-1]
    if not failed.get(target.count):
        return (
            f"autoclone: the last cell run, [{target.count}], raised no error: nothing to "
            "repair (run the failing cell again, then %autoclone)"
        )
    left_out = [c.count for c in cells[:-1] if failed.get(c.count)]
    return [c for c in cells if c.count not in left_out], left_out


# --------------------------------------------------------------------------- the repair


def notebook_text(cells: list[Cell]) -> str:
    """The cells as an nbformat 4 notebook, one code cell each, in execution order."""
    import nbformat

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(cell.source) for cell in cells]
    return str(nbformat.writes(book))


def mirror(cwd: Path, folder: Path) -> None:
    """The kernel's folder as the trials see it: top-level ``.py`` files copied (local
    modules the repair may edit), everything else linked by absolute path (data is read
    where it is, and never copied, however large)."""
    try:
        listing = list(os.scandir(cwd))
    except OSError as exc:
        raise MagicError(f"cannot list the kernel's folder {cwd}: {exc.strerror}") from exc
    for entry in listing:
        if entry.name in _SKIPPED or entry.name.startswith("autoclone-"):
            continue
        if entry.name.endswith(".py") and entry.is_file():
            shutil.copy2(entry.path, folder / entry.name)
        else:
            (folder / entry.name).symlink_to(os.path.abspath(entry.path))


def repair_cells(cells: list[Cell], cwd: Path, timeout: float) -> Repaired:
    """Repair the cells as one program, run where the kernel runs; the report told in
    execution counts. Stop signals end the trials as they do for ``autoclone fix``."""
    from autoclone import lifecycle
    from autoclone.repair import repair
    from autoclone.session import Options

    with tempfile.TemporaryDirectory(prefix="autoclone-kernel-") as tmp:
        root = Path(tmp).resolve()
        mirror(cwd, root)
        (root / NAME).write_text(notebook_text(cells), encoding="utf-8")
        options = Options(script=root / NAME, root=root, cwd=root, timeout=timeout)
        restore = lifecycle.install()
        try:
            report = repair(options)
        except lifecycle.Interrupted as exc:
            raise KeyboardInterrupt from exc
        finally:
            lifecycle.finish()
            restore()
        return told_in_cells(report, cells, root)


def told_in_cells(report: rp.Report, cells: list[Cell], root: Path) -> Repaired:
    """The report with cells named by count, its patch checked as ``fix`` checks a
    notebook's (the patched cells make the verified program), and the edited cells."""
    from autoclone import notebook as nbk
    from autoclone import report as rp

    done = Repaired((), report, cells)
    if report.status == rp.BAD_INPUT:
        report.summary = in_counts(report.summary, cells)
        return done
    view = nbk.View(nbk.read(root / NAME), nbk.script_name(NAME), NAME, NAME)
    report, verified = nbk.translate(report, view)
    if report.status == rp.FIXED:
        problem = nbk.check_report(report, view, verified, root)
        if problem is not None:
            report.status = rp.UNFIXABLE
            report.summary = f"the verified patch is not offered: {problem}"
    _name_counts(report, cells)
    if report.status == rp.FIXED:
        _edits(done, view.nb, verified)
    return done


def _edits(done: Repaired, nb: nbk.Notebook, verified: str | None) -> None:
    from autoclone import notebook as nbk

    start = done.report.patch.find("diff --git ")
    done.modules = done.report.patch[start:] if start >= 0 else ""
    if verified is None:
        return
    before = nbk.cells_of(nb.script)
    for position, lines in sorted(nbk.edited_cells(nb, verified).items()):
        count = done.cells[position - 1].count
        done.edited[count], done.old[count] = lines, before[position]


def in_counts(text: str, cells: list[Cell]) -> str:
    """``autoclone_kernel_cells.ipynb cell 3`` (a position) as ``cell [7]`` (the count
    Jupyter shows next to it)."""
    text = _CELL.sub(lambda m: f"cell [{cells[int(m.group(1)) - 1].count}]", text)
    return text.replace(NAME + ".py", "the cells").replace(NAME, "the cells")


def _name_counts(report: rp.Report, cells: list[Cell]) -> None:
    report.summary, report.error = in_counts(report.summary, cells), in_counts(report.error, cells)
    report.explanation = in_counts(report.explanation, cells)
    report.notes = [in_counts(note, cells) for note in report.notes]


# --------------------------------------------------------------------------- showing it


def run(kernel: Kernel, args: Args) -> None:
    """The magic: find the cells, repair them (or reuse the verified repair of the same
    cells, for ``--apply`` after ``%autoclone``), show the outcome, and with ``--apply``
    put the patched cells below."""
    found = program(kernel)
    if isinstance(found, str):
        print(found)
        return
    cells, left_out = found
    cwd = Path.cwd()
    key = (tuple(cells), str(cwd))
    done = kernel.last
    if not (args.apply and done is not None and done.key == key and done.edited):
        names = ", ".join(f"[{c.count}]" for c in cells)
        print(f"autoclone: repairing cells {names}, run in order as one program, in {cwd}")
        done = repair_cells(cells, cwd, args.timeout)
        done.key = key
        kernel.last = done
        if left_out:
            left = ", ".join(f"[{n}]" for n in left_out)
            done.report.notes.append(f"cells {left} raised when run, and are left out")
    show(done)
    if args.apply:
        apply(kernel.shell, done)


def text(done: Repaired) -> str:
    """The status line, the explanation and notes, and the patch as a diff per cell."""
    import difflib

    from autoclone import report as rp

    report = done.report
    if report.status == rp.BAD_INPUT:
        return f"autoclone: error: {report.summary}"
    cost = f"[{report.runs} runs, {report.seconds:.1f} s]"
    lines = [f"autoclone: {report.status}: {report.summary}  {cost}"]
    lines += [report.explanation] if report.explanation else []
    lines += [f"note: {note}" for note in report.notes]
    for count, new in done.edited.items():
        label = f"cell [{count}]"
        diff = difflib.unified_diff(done.old[count], new, label, f"{label} (patched)",
                                    lineterm="")  # fmt: skip
        lines.append("\n".join(diff))
    if done.modules:
        lines.append(done.modules.rstrip("\n"))
    if done.edited:
        lines.append("(%autoclone --apply puts the patched cells in a new cell below)")
    return "\n".join(lines)


def _html(shown: str) -> str:
    """The same text, with the diff's added and removed lines coloured."""
    colours = {"+": "#1a7f37", "-": "#cf222e", "@": "#8250df"}
    rows = []
    for line in shown.split("\n"):
        colour = colours.get(line[:1]) if not line.startswith(("+++", "---")) else None
        escaped = html.escape(line)
        rows.append(f'<span style="color:{colour}">{escaped}</span>' if colour else escaped)
    return "<pre>" + "\n".join(rows) + "</pre>"


def show(done: Repaired) -> None:
    from IPython.display import display

    shown = text(done)
    display({"text/plain": shown, "text/html": _html(shown)}, raw=True)


def apply(shell: Any, done: Repaired) -> None:
    """One new cell below with the patched cells, in execution order, not run."""
    if not done.edited:
        print("autoclone: no verified patch of the cells: nothing to apply")
        return
    parts = [f"# cell [{n}], patched by autoclone\n" + "\n".join(lines)
             for n, lines in done.edited.items()]  # fmt: skip
    shell.set_next_input("\n\n".join(parts), replace=False)
    first = min(done.edited)
    again = [f"[{c.count}]" for c in done.cells if c.count > first and c.count not in done.edited]
    names = ", ".join(f"[{n}]" for n in done.edited)
    what = f"cells {names} are" if len(done.edited) > 1 else f"cell {names} is"
    then = f", then cells {', '.join(again)} again" if again else ""
    print(
        f"autoclone: the patched {what} in a new cell below, not run: run it{then} (where "
        "no cell appears, as with nbclient, paste the patched lines of the diff)"
    )
    if done.modules:
        print(
            "autoclone: local modules are patched too, not applied: `git apply` their diff "
            f"in {Path.cwd()}"
        )
