"""Several scripts, or a folder of them: each repaired by its own ``autoclone fix``.

Each script runs as ``python -m autoclone fix SCRIPT --format json`` in a subprocess, so
everything a repair owns stays per script: its signal handling, its warm interpreters, its
temporary copy, the all-or-nothing write of its files. This module starts them (as many at
once as the cores allow), forwards the user's options, relays their progress lines, and
turns what they print into ``Outcome`` values; the CLI prints. A stop signal is passed on
to every running script, which cleans up as it would alone; if autoclone itself is killed,
each script gets SIGTERM from the kernel (``AUTOCLONE_BATCH_PARENT``, see ``cli.main``).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoclone import lifecycle
from autoclone import report as rp
from autoclone.session import Options

#: Set in each script's environment: the pid whose death must end that script's repair.
PARENT_ENV = "AUTOCLONE_BATCH_PARENT"

WRITE, DRY_RUN, CHECK = "write", "dry_run", "check"

#: Scripts repaired at once at most: each runs trials of its own, and memory for a warm
#: torch interpreter per script matters more than cores beyond this.
MOST_AT_ONCE = 4

#: Seconds a stopped script has to clean up (kill its trials, remove its copy) before it
#: is killed outright.
GRACE = 30.0

#: A folder's files that are never scripts to run, whatever their top level holds.
NOT_SCRIPTS = frozenset({"setup.py", "conftest.py"})

#: The status of a script whose repair ended without a report (it crashed, or was killed).
ERROR = "error"

#: The one-line endings of ``fix`` itself, not progress (``autoclone: fixed: ...``,
#: ``autoclone: terminated; nothing written``).
_ENDINGS = (
    *(f"{word}: " for word in (*rp.EXIT_CODES, ERROR)),
    *(f"{word}; " for word in lifecycle.STOP_SIGNALS.values()),
    "internal error",
)


class NoScripts(Exception):
    """A path names nothing to repair; the message is the one line the user sees."""


def find_scripts(paths: Sequence[Path]) -> list[Path]:
    """The scripts to repair, in the order given, each once. A file named is always
    taken (its repair says what is wrong with it); a folder gives the ``.py`` files
    directly in it (not its subfolders, sorted) that ``looks_like_script``."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = [p for p in sorted(path.glob("*.py")) if _candidate(p)]
            if not inside:
                raise NoScripts(
                    f"{path}: no scripts in this folder (a script is a .py file with code at "
                    'its top level or an `if __name__ == "__main__":` block)'
                )
            found += inside
        elif path.exists():
            found.append(path)
        else:
            raise NoScripts(f"{path}: no such file or folder")
    unique: dict[Path, Path] = {}
    for p in found:
        unique.setdefault(p.resolve(), p)  # the same file named twice is repaired once
    return list(unique.values())


def _candidate(path: Path) -> bool:
    name = path.name
    if name.startswith((".", "_")) or name in NOT_SCRIPTS or not path.is_file():
        return False
    try:
        return looks_like_script(path.read_bytes())
    except OSError:
        return True  # unreadable: its repair says so in one line, better than silence


def looks_like_script(source: bytes | str) -> bool:
    """A file meant to be run, not imported: it has an ``if __name__ == "__main__":``
    block, or code at its top level beyond imports, definitions, assignments and a
    docstring (a call, a loop, a ``with``). A module of helpers next to the scripts is
    left alone, and a file that does not parse is kept so that the user hears about it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True
    return any(_runs_something(node) for node in tree.body)


def _runs_something(node: ast.stmt) -> bool:
    if isinstance(node, ast.If):
        test = node.test
        return (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
        )
    if isinstance(node, ast.Expr):
        return not isinstance(node.value, ast.Constant)
    return isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith))


@dataclass(frozen=True)
class Batch:
    """What to run: the scripts, the user's options (``script`` is ignored), the mode."""

    scripts: tuple[Path, ...]
    options: Options
    mode: str = WRITE
    at_once: int = 0  # 0: as many as the cores allow (``at_once()``)

    def width(self) -> int:
        if self.at_once:
            return self.at_once
        return at_once(len(self.scripts), self.options.nproc)


def cores() -> int:
    """The cores this process may run on (not the machine's: a container's or CI's
    affinity mask is what counts)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def at_once(scripts: int, nproc: int = 1) -> int:
    """Scripts repaired at once: one per core (a script's trials run one at a time by
    default), fewer when each trial launches ``nproc`` processes, at most ``MOST_AT_ONCE``."""
    return max(1, min(scripts, cores() // max(nproc, 1), MOST_AT_ONCE))


def forwarded(options: Options, *, one_job: bool) -> list[str]:
    """The user's options as ``fix`` flags, for each script's own ``fix``. ``one_job``:
    several scripts share the cores, so each runs one trial at a time unless ``-j`` says."""
    out = ["--timeout", repr(options.timeout), "--steps", str(options.steps),
           "--device", options.device, "--budget", repr(options.budget)]  # fmt: skip
    for name, value in options.overrides.items():
        out += ["--set", f"{name}={value}"]
    if options.root is not None:
        out += ["--root", str(options.root)]
    if options.shrink is not None:
        out.append("--shrink" if options.shrink else "--no-shrink")
    jobs = options.jobs if options.jobs is not None else (1 if one_job else None)
    if jobs is not None:
        out += ["--jobs", str(jobs)]
    if options.launcher != "none" or options.nproc != 1:
        out += ["--launcher", options.launcher, "--nproc", str(options.nproc)]
    if options.allow_outside_writes:
        out.append("--allow-outside-writes")
    if options.allow_network:
        out.append("--allow-network")
    return out


def child_argv(script: Path, batch: Batch, patch_file: Path | None) -> list[str]:
    """One script's ``fix``: JSON on stdout (the report), progress lines on stderr (-v),
    the dry-run diff's exact bytes in ``patch_file`` (JSON holds it as text, which
    would lose a latin-1 file's bytes)."""
    argv = [sys.executable, "-m", "autoclone", "fix", str(script), "--format", "json", "-v"]
    argv += forwarded(batch.options, one_job=batch.width() > 1)
    if batch.mode != WRITE:
        argv.append("--dry-run")
    if patch_file is not None:
        argv += ["--patch-file", str(patch_file)]
    return [*argv, "--", *batch.options.args]


@dataclass
class Outcome:
    """How one script's repair ended: its report (None if it ended without one), its
    exit code (128 + N after signal N), the wall-clock seconds, its last stderr line."""

    path: Path
    exit_code: int
    seconds: float
    report: dict[str, Any] | None = None
    last_line: str = ""
    patch: bytes = b""  # the dry-run diff, byte for byte

    @property
    def status(self) -> str:
        return str(self.report["status"]) if self.report else ERROR

    @property
    def edits(self) -> int:
        return len(self.report.get("edits") or []) if self.report else 0

    @property
    def runs(self) -> int:
        return int(self.report.get("runs") or 0) if self.report else 0

    def check_code(self) -> int:
        """``--check``: 1 for an autograd error (fixable or not) and for a script that
        could not be checked in time, 2 for bad input, 0 for none; or how it ended."""
        if self.report is None:
            return self.exit_code
        if self.status in (rp.FIXED, rp.UNFIXABLE, rp.TIMEOUT):
            return 1
        return 2 if self.status == rp.BAD_INPUT else 0

    def as_json(self, *, check: bool = False) -> dict[str, Any]:
        """The script's report with its path first; ``--check`` prints no patch."""
        code = self.check_code() if check else self.exit_code
        if self.report is None:
            return {"path": str(self.path), "status": ERROR, "summary": self.last_line,
                    "exit_code": code}  # fmt: skip
        data = {"path": str(self.path), **self.report, "exit_code": code}
        if check:
            data["patch"] = ""
        return data


def worst(outcomes: Sequence[Outcome], *, check: bool = False) -> int:
    """The batch's exit code: the worst script's (2 > 1 > 0; 128 + N beats them all)."""
    return max((o.check_code() if check else o.exit_code for o in outcomes), default=0)


def combined_patch(outcomes: Sequence[Outcome]) -> bytes:
    """Every fixed script's dry-run diff, in the scripts' order: one patch for
    ``git apply``."""
    return b"".join(o.patch for o in outcomes if o.status == rp.FIXED)


def table(outcomes: Sequence[Outcome]) -> str:
    """The summary: one row per script (status, edits, runs, seconds)."""
    head = ("script", "status", "edits", "runs", "seconds")
    rows = [(str(o.path), o.status, str(o.edits), str(o.runs), f"{o.seconds:.1f}")
            for o in outcomes]  # fmt: skip
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def fmt(row: tuple[str, ...]) -> str:
        left = [c.ljust(w) for c, w in zip(row[:2], widths[:2], strict=True)]
        right = [c.rjust(w) for c, w in zip(row[2:], widths[2:], strict=True)]
        return "  ".join(left + right).rstrip()

    return "\n".join(fmt(r) for r in [head, *rows])


def totals(outcomes: Sequence[Outcome], mode: str) -> str:
    """The last line: how many scripts ended how, and what was written."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in counts.items())
    fixed = counts.get(rp.FIXED, 0)
    if mode == CHECK:
        errors = counts.get(rp.FIXED, 0) + counts.get(rp.UNFIXABLE, 0)
        late = counts.get(rp.TIMEOUT, 0)
        tail = f"check: {errors} with an autograd error ({fixed} fixable by `autoclone fix`)"
        tail += f", {late} not checked in time" if late else ""
        tail += "; nothing written"
    elif mode == DRY_RUN or not fixed:
        tail = "nothing written"
    else:
        tail = f"{fixed} patch{'es' if fixed > 1 else ''} written"
    total = sum(o.seconds for o in outcomes)
    scripts = f"{len(outcomes)} script{'s' if len(outcomes) != 1 else ''}"
    return f"{scripts}: {parts}; {tail}  [{total:.1f} s of repairs]"


Line = Callable[[Path, str], None]
Done = Callable[[Outcome], None]


def run(batch: Batch, on_line: Line, on_done: Done) -> list[Outcome]:
    """Repair every script, ``batch.width()`` at once; ``on_line`` gets each progress
    message (without ``autoclone: ``), ``on_done`` each outcome as it ends. Returns the
    outcomes in the scripts' order. A stop signal (``Interrupted``) is passed on to the
    running scripts, which are waited for, and re-raised naming what was written."""
    with _patch_folder(batch.mode) as folder:
        pool = _Pool(batch, folder, on_line)
        try:
            return pool.run(on_done)
        except lifecycle.Interrupted as exc:
            pool.stop(exc.signum)
            exc.done = pool.written_words()
            raise
        finally:
            pool.stop(signal.SIGTERM)  # nothing left running, whatever ended the batch


@contextlib.contextmanager
def _patch_folder(mode: str) -> Iterator[Path | None]:
    """Where each script's dry-run diff is kept: only a dry run needs one. Where the
    kernel has anonymous files (``memfd_create``) none is made: each diff goes to a file
    that dies with this process, even by ``kill -9`` (see ``_patch_file``)."""
    if mode != DRY_RUN:
        yield None
        return
    if hasattr(os, "memfd_create"):
        yield MEMORY
        return
    with tempfile.TemporaryDirectory(prefix="autoclone-batch-") as folder:
        yield Path(folder)


#: The "folder" of diffs kept in anonymous memory files.
MEMORY = Path("/proc/self/fd")


def _patch_file(folder: Path | None, position: int) -> tuple[Path | None, int | None]:
    """Where one script's ``fix`` writes its diff (and the descriptor that holds it open
    here, for a memory file: the child opens it as ``/proc/<this pid>/fd/<fd>``)."""
    if folder is None:
        return None, None
    if folder != MEMORY:
        return folder / f"{position}.patch", None
    fd = os.memfd_create(f"autoclone-patch-{position}")
    return Path(f"/proc/{os.getpid()}/fd/{fd}"), fd


@dataclass
class _Child:
    """One script's running ``fix`` and what it has printed so far."""

    path: Path
    proc: subprocess.Popen[bytes]
    started: float
    patch_file: Path | None
    held: int | None = None  # the descriptor of an anonymous patch file, closed once read
    out: bytearray = field(default_factory=bytearray)
    partial: str = ""
    last_line: str = ""
    open: int = 2

    def feed(self, stderr: bool, data: bytes, on_line: Line) -> None:
        if not stderr:
            self.out += data
            return
        *lines, self.partial = (self.partial + data.decode(errors="replace")).split("\n")
        for line in lines:
            self.last_line = line.strip() or self.last_line
            if _is_progress(line):
                on_line(self.path, line[len("autoclone: ") :])

    def outcome(self) -> Outcome:
        code = self.proc.returncode
        code = 128 - code if code < 0 else code  # killed by signal N: as a shell says it
        if self.partial.strip():
            self.last_line = self.partial.strip()
        report = None
        with contextlib.suppress(ValueError):
            parsed = json.loads(self.out.decode(errors="replace"))
            report = parsed if isinstance(parsed, dict) else None
        patch = b""
        if self.patch_file is not None and self.patch_file.exists():
            patch = self.patch_file.read_bytes()
        if self.held is not None:
            os.close(self.held)
            self.held = None
        seconds = time.monotonic() - self.started
        return Outcome(self.path, code, seconds, report, self.last_line, patch)


def _is_progress(line: str) -> bool:
    """A progress message of the script's ``fix``, not its ending or its explanation."""
    if not line.startswith("autoclone: "):
        return False
    return not line[len("autoclone: ") :].startswith(_ENDINGS)


class _Pool:
    """The running scripts, read through one selector in the main thread (where a stop
    signal lands)."""

    def __init__(self, batch: Batch, folder: Path | None, on_line: Line) -> None:
        self.batch, self.folder, self.on_line = batch, folder, on_line
        self.waiting = list(enumerate(batch.scripts))
        self.running: list[_Child] = []
        self.done: dict[int, Outcome] = {}
        self.index: dict[int, int] = {}  # pid -> the script's position
        self.selector = selectors.DefaultSelector()
        self.stopped = False

    def run(self, on_done: Done) -> list[Outcome]:
        while self.waiting or self.running:
            while self.waiting and len(self.running) < self.batch.width():
                self._start(*self.waiting.pop(0))
            self._pump(0.25)
            for child in self._ended():
                outcome = child.outcome()
                self.done[self.index[child.proc.pid]] = outcome
                on_done(outcome)
        return [self.done[i] for i in range(len(self.batch.scripts))]

    def _start(self, position: int, script: Path) -> None:
        patch_file, held = _patch_file(self.folder, position)
        env = {**os.environ, PARENT_ENV: str(os.getpid())}
        proc = subprocess.Popen(
            child_argv(script, self.batch, patch_file), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        child = _Child(script, proc, time.monotonic(), patch_file, held)
        for stream, is_err in ((proc.stdout, False), (proc.stderr, True)):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self.selector.register(stream, selectors.EVENT_READ, (child, is_err))
        self.index[proc.pid] = position
        self.running.append(child)

    def _pump(self, timeout: float) -> None:
        """Read whatever the running scripts printed, waiting at most ``timeout``."""
        if not self.selector.get_map():
            time.sleep(timeout)
            return
        for key, _ in self.selector.select(timeout):
            child, is_err = key.data
            self._read(key.fileobj, child, is_err)  # type: ignore[arg-type]

    def _read(self, stream: Any, child: _Child, is_err: bool) -> bool:
        """Read once; False when there is nothing more to read now (or ever)."""
        try:
            data = os.read(stream.fileno(), 65536)
        except BlockingIOError:
            return False
        if data:
            child.feed(is_err, data, self.on_line)
            return True
        self.selector.unregister(stream)
        stream.close()
        child.open -= 1
        return False

    def _ended(self) -> list[_Child]:
        """Scripts whose process exited, their pipes drained of what is there (a
        grandchild that kept a pipe open must not hold the batch)."""
        ended = [c for c in self.running if c.proc.poll() is not None]
        for child in ended:
            for stream, is_err in ((child.proc.stdout, False), (child.proc.stderr, True)):
                if stream is None or stream.closed:
                    continue
                while self._read(stream, child, is_err):
                    pass
                if not stream.closed:
                    self.selector.unregister(stream)
                    stream.close()
            self.running.remove(child)
        return ended

    def stop(self, signum: int) -> None:
        """Pass the signal on to every running script and wait for them to clean up
        (``GRACE`` seconds, then SIGKILL). Idempotent."""
        if self.stopped:
            return
        self.stopped = True
        for child in self.running:
            with contextlib.suppress(ProcessLookupError):
                child.proc.send_signal(signum)
        deadline = time.monotonic() + GRACE
        while self.running and time.monotonic() < deadline:
            self._pump(0.1)
            for child in self._ended():
                self.done[self.index[child.proc.pid]] = child.outcome()
        for child in self.running:
            child.proc.kill()
            child.proc.wait()
            self.done[self.index[child.proc.pid]] = child.outcome()
        self.running.clear()
        self.selector.close()

    def written_words(self) -> str:
        """For the one line after a stop: whose patches were written ("" for none)."""
        if self.batch.mode != WRITE:
            return ""
        written = [
            str(o.path)
            for o in self.done.values()
            if (o.status == rp.FIXED and o.exit_code == 0)
            or o.last_line.endswith("the patch was written")
        ]
        if not written:
            return ""
        return f"the patch{'es' if len(written) > 1 else ''} of {', '.join(written)} written"
