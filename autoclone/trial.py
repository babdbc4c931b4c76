"""Run the user's script once, for real, without ever touching the user's folder.

Each run gets a fresh tree of the project folder (built from a snapshot taken once per
session, see ``autoclone.snapshot``) with the variant sources (original, instrumented or
patched) written into it in each file's own encoding, its own process group (so a
timeout kills every process the script started), its own temp directory (``TMPDIR``,
removed with the tree: DataLoader's ``pymp-*`` folders too) and its own result file.
Every run lives in one session directory that ``close`` removes; a stop signal kills
the running trials at once (``autoclone.lifecycle``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import autoclone
from autoclone import isolation, lifecycle, network, outputs, zygotes
from autoclone import launcher as launching
from autoclone.classify import NOT_AUTOGRAD, classify
from autoclone.snapshot import MARKER, Snapshot
from autoclone.zygotes import Zygote


@dataclass(frozen=True)
class ErrorInfo:
    """The exception that ended a run, with frames relative to the project root."""

    type: str
    message: str
    frames: tuple[tuple[str, int], ...] = ()
    #: A module the script could not import that exists beside the user's project where
    #: the script's search path, taken from the user's folder, points (``'../lib'``)
    found: str = ""
    #: Grad mode was still off when the error reached the top of the script: a
    #: ``torch.set_grad_enabled(False)`` that nothing undid (not a ``with`` block)
    grad_off: bool = False

    @property
    def line(self) -> str:
        return f"{self.type}: {self.message.splitlines()[0] if self.message else ''}"


@dataclass(frozen=True)
class RunResult:
    """What one execution showed. ``status``: completed, stopped, error, exit, timeout, crash."""

    status: str
    backward: int = 0
    losses: tuple[Any, ...] = ()
    grads: tuple[tuple[Any, ...], ...] = ()
    error: ErrorInfo | None = None
    forward_frames: tuple[tuple[str, int], ...] = ()
    forward_op: str = ""
    diagnosis: dict[str, Any] | None = None
    warnings: tuple[dict[str, Any], ...] = ()  # writes autograd could not see (tracer)
    stderr: str = ""
    seconds: float = 0.0  # wall time of the whole trial, as the parent saw it
    script_seconds: float = 0.0  # the user's script alone, as the child timed it
    exit_code: int = 0  # the script's own exit status (``sys.exit(3)``), when it exited
    cuda_mapped: int = 0  # CUDA calls the child ran on the CPU (``autoclone.devices``)
    peak_mb: float = 0.0  # the trial's peak resident memory
    #: Leaves the backward calls differentiated, counted by shape ("16x8": 2)
    reached: Mapping[str, int] = field(default_factory=dict)
    unreached: Mapping[str, int] = field(default_factory=dict)  # optimizers' leaves, by shape
    #: Optimizers' leaves that backward calls reached and never left a gradient in
    ungraded: Mapping[str, int] = field(default_factory=dict)
    #: Per backward call: how many parameters of each optimizer it reached (by the
    #: optimizer's index, as text), and the optimizers that stepped right after it
    call_reach: tuple[Mapping[str, int], ...] = ()
    steps_after: tuple[tuple[int, ...], ...] = ()
    #: Per backward call: each reached optimizer's gradient checksum (by its index)
    opt_grads: tuple[Mapping[str, Any], ...] = ()
    #: The end of what the script printed (a reference by printed output compares it)
    stdout: str = ""
    #: Lines where a loss took labels that require grad (``autoclone.labels``)
    label_grads: tuple[tuple[str, int], ...] = ()
    #: Lines where a log-probability was weighted by a tensor with a graph (``score_weights``)
    score_weights: tuple[tuple[str, int], ...] = ()
    #: A traced run that went on past its first version conflict (``RunSpec.past_conflict``):
    #: the error it would have raised, after how many backward calls, and its diagnosis.
    conflict: ErrorInfo | None = None
    conflict_backward: int = 0
    conflict_diagnosis: dict[str, Any] | None = None
    late: list[str] = field(default_factory=list)  # see ``within``
    other_conflict: int = -1  # see ``Tracer.other_conflict``
    #: Lines where ``torch.tensor`` copied a tensor that has a graph (``autoclone.copies``)
    copied: tuple[tuple[str, int], ...] = ()
    #: Lines of the user's files the run executed (traced runs only; None: not known), and
    #: those it had executed when it met its first version conflict (``autoclone.executed``)
    executed: frozenset[tuple[str, int]] | None = None
    conflict_executed: frozenset[tuple[str, int]] | None = None
    #: On the run as it ended at its conflict (``at_conflict``): the whole run, which went on.
    past: RunResult | None = None
    #: The failing step's forward reference a fork of the traced run computed where
    #: autograd refused a write (``autoclone.child_fork``): its numbers only
    forward: RunResult | None = None
    #: Paths outside the trial's copy the run wrote or deleted (``autoclone.isolation``)
    outside: tuple[isolation.Change, ...] = ()
    #: The writes outside the copy the trial's audit hook saw: path -> the user's line
    writes: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    #: In guard mode: the write outside the copy that was refused (``path``, ``frames``)
    refused: Mapping[str, Any] | None = None
    #: Hosts beyond this machine the run tried to reach (``autoclone.network``): the line
    hosts: Mapping[str, tuple[str, int]] = field(default_factory=dict)

    @property
    def failed_in_backward(self) -> bool:
        """The error was raised by a backward call: the child notes a call's loss before
        running it, so a failed call leaves one loss more than the calls it counts
        (``torch.autograd.grad`` is not counted: it is not one of the script's steps)."""
        return self.status == "error" and len(self.losses) > self.backward

    def within(
        self, limit: int, edited: Callable[[], Collection[tuple[str, int]]] = frozenset
    ) -> RunResult:
        """A run that went on past ``limit`` (``RunSpec.run_on``) and then failed with an
        error that is not autograd's (an evaluation's bug, a missing file) is judged on
        what it did up to the limit, as a run that stopped there; the error is kept in
        ``late`` for the report. An autograd error there stands: it is the next conflict;
        so does any error raised on an ``edited()`` line (the patch's own doing; asked for
        only then)."""
        if self.status not in ("error", "exit", "crash") or self.backward < limit:
            return self
        message = self.error.message if self.error else self.stderr.strip()[-300:]
        if classify(message) != NOT_AUTOGRAD:
            return self
        frames = self.error.frames if self.error else ()
        if frames and {tuple(f) for f in frames} & set(edited()):
            return self
        return replace(self, status="stopped", error=None, late=message.splitlines()[-1:])

    def at_conflict(self) -> RunResult:
        """A run that went on past its version conflict, as it would have ended there
        (what the diagnosis and the shrinking read); ``past`` keeps the whole run, whose
        numbers are the reference (``autoclone.references.past_conflict``)."""
        if self.conflict is None:
            return self
        n = self.conflict_backward
        return replace(self, status="error", error=self.conflict, backward=n,
                       losses=self.losses[: n + 1], grads=self.grads[:n],
                       diagnosis=self.conflict_diagnosis, conflict=None, past=self,
                       executed=self.conflict_executed)  # fmt: skip


@dataclass(frozen=True)
class RunSpec:
    """One execution: which sources, which mode, which sites, how many backward calls."""

    files: Mapping[str, str]  # relpath -> text written over the copy
    mode: str = "plain"
    sites: frozenset[str] = frozenset()
    limit: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)  # argparse defaults (shrunk)
    timeout: float | None = None  # None: the runner's
    #: K > 0 (traced runs only): go on past the first version conflict for K backward calls
    #: with the saved values kept (the tracer's copy-on-write), computing the reference
    past_conflict: int = 0
    #: Seconds a run goes on past ``limit`` to meet a later error; a timeout in that
    #: time leaves the run as it stood at the limit
    run_on: float = 0.0


class Unsafe(Exception):
    """A trial could not be kept from changing the user's files; the message is the one
    line the user sees."""


@dataclass
class Runner:
    """Runs specs for one project; counts every execution of the user's script."""

    root: Path
    script: str  # relative to root
    argv: tuple[str, ...] = ()
    cwd: str = "."  # relative to root: where the user stands, when inside the root
    timeout: float = 60.0
    env: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, str] = field(default_factory=dict)
    warm: bool = True  # fork trials from a zygote that imported torch once
    jobs: int = 1  # trials that may run at once (``run`` is thread-safe); one zygote each
    encodings: Mapping[str, str] = field(default_factory=dict)  # relpath -> source codec
    launcher: str = launching.NONE  # "torchrun": every trial is a launch of nproc ranks
    nproc: int = 1
    #: How trials are kept from the user's files (``autoclone.isolation``): "auto" (the
    #: copy-on-write world where the system has it, else the guard), or a mode
    isolate: str = "auto"
    allow_outside: bool = False  # where trials cannot be isolated: ``allow``, not ``guard``
    online: bool = False  # trials get the network (``--allow-network``)
    module: str = ""  # ``-m``: the script is run as ``python -m module`` runs it
    #: Where the user stands: ``PYTHONPATH``'s relative entries are resolved from there
    user_cwd: Path | None = None
    #: The user's files outside the project a run may load (their path -> their name
    #: relative to the root, ``../src/pkg/model.py``): traced, never copied nor edited
    outer: Mapping[str, str] = field(default_factory=dict)
    runs: int = 0
    #: Every path outside the copy a run wrote or deleted, first seen first
    outside: dict[str, isolation.Change] = field(default_factory=dict)
    #: Every host beyond this machine a run tried to reach, with the line, first seen first
    hosts: dict[str, tuple[str, int]] = field(default_factory=dict)
    _idle: list[Zygote] = field(default_factory=list, repr=False)
    _started: list[Zygote] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _tree_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Trial folders are removed off the run's path: on a disk mounted with ``discard``
    #: each of an isolated trial's few dozen overlay folders takes milliseconds to go
    _removing: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(1, "autoclone-rm"),
        repr=False,
    )
    _session: Path | None = field(default=None, repr=False)
    _snapshot: Snapshot | None = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)
    _forget: weakref.finalize | None = field(default=None, repr=False)

    @property
    def skipped(self) -> list[str]:
        """Entries of the folder trials do without (pipes, sockets, unreadable files)."""
        return list(self._snapshot.skipped) if self._snapshot is not None else []

    def run(self, spec: RunSpec) -> RunResult:
        lifecycle.check()
        with self._lock:
            self.runs += 1
        snapshot = self._take_snapshot()
        trial = Path(tempfile.mkdtemp(prefix="trial-", dir=self._session))
        (trial / "tmp").symlink_to(_short_temp())
        try:
            snapshot.build(trial / "project", self._encoded(spec.files))
            with outputs.capped(trial):
                result = self._execute(spec, trial / "project", trial)
            return self._checked(result, trial)
        finally:
            _remove(Path(os.path.realpath(trial / "tmp")))  # outside the session: now
            try:
                self._removing.submit(_remove, trial)
            except RuntimeError:  # closed: no more removals off the path
                _remove(trial)
            with self._tree_lock:
                snapshot.heal()

    def _checked(self, result: RunResult, trial: Path) -> RunResult:
        """Note what the run wrote outside its copy; stop at a write the guard refused."""
        result = replace(result, outside=_outside(trial, result.writes))
        with self._lock:
            for change in result.outside:
                if change.path not in self.outside or change.file:
                    self.outside.setdefault(change.path, change)
            for host, line in result.hosts.items():
                self.hosts.setdefault(host, line)
        if result.refused:
            frames = result.refused.get("frames") or []
            where = f"{frames[0][0]}:{frames[0][1]}: " if frames else ""
            raise Unsafe(
                f"{where}the script writes {result.refused['path']}, outside its folder, and "
                f"trials cannot be isolated here ({isolation.available() or 'guard mode'}); "
                "nothing was written. To let trials write there for real, rerun with "
                "--allow-outside-writes"
            )
        return result

    def mode(self) -> str:
        """The isolation mode trials run in, decided once: the copy-on-write world if this
        system has it; else the guard (or ``allow``, when the user accepted the risk)."""
        if self.isolate == "auto":
            asked = os.environ.get(isolation.MODE_VAR, "")  # the tests' way to ask for a mode
            if asked not in (isolation.NAMESPACE, isolation.GUARD, isolation.ALLOW):
                why = isolation.available(self._session)
                asked = isolation.GUARD if why else isolation.NAMESPACE
            if asked == isolation.GUARD and self.allow_outside:
                asked = isolation.ALLOW
            self.isolate = asked
        return self.isolate

    def prepare(self) -> Snapshot:
        """The session directory and the folder's snapshot (made once, by the first call
        or the first run). Raises ``TooLarge`` when the folder would not fit."""
        return self._take_snapshot()

    def _take_snapshot(self) -> Snapshot:
        with self._tree_lock:
            if self._session is None:
                self._session = Path(tempfile.mkdtemp(prefix="autoclone-"))
                (self._session / MARKER).touch()
                # removed by close(), or when the runner is collected, or at exit
                self._forget = weakref.finalize(self, _remove, self._session)
            if self._snapshot is None:
                room = shutil.disk_usage(self._session).free - _MARGIN
                self._snapshot = Snapshot.take(self.root, self._session / "store", max(room, 0))
            return self._snapshot

    def _encoded(self, files: Mapping[str, str]) -> dict[str, bytes]:
        """Each variant in its file's own encoding, so a latin-1 literal stays latin-1."""
        out = {}
        for rel, text in files.items():
            try:
                out[rel] = text.encode(self.encodings.get(rel, "utf-8"))
            except (UnicodeEncodeError, LookupError):
                out[rel] = text.encode("utf-8")
        return out

    def _execute(self, spec: RunSpec, project: Path, trial: Path) -> RunResult:
        env = self._environment(spec, project, trial)
        timeout = self.timeout if spec.timeout is None else spec.timeout
        if self.launcher == launching.TORCHRUN:
            return self._launched(project, env, trial, timeout)
        start = time.monotonic()
        timed_out = self._forked(project / self.cwd, env, trial, timeout)
        if timed_out is None:
            lifecycle.check()
            timed_out = self._fresh(project / self.cwd, env, trial, timeout)
        lifecycle.check()  # a trial a stop signal killed is no verdict
        seconds = time.monotonic() - start
        text = outputs.tail(trial / "stderr")
        if isolation.FAILED in text and not (trial / "result.json").exists():
            raise Unsafe(text[text.index(isolation.FAILED) :].splitlines()[0])
        provisional = spec.past_conflict or spec.run_on
        if timed_out and provisional and (trial / "result.json").exists():
            # as at the conflict
            return _load(trial / "result.json", project, text, seconds, self.outer)
        if timed_out:
            return RunResult("timeout", stderr=text, seconds=seconds)
        result = _load(trial / "result.json", project, text, seconds, self.outer)
        return replace(result, stdout=outputs.tail(trial / "stdout", _STDOUT_KEPT))

    def _launched(
        self, project: Path, env: dict[str, str], trial: Path, timeout: float
    ) -> RunResult:
        """A trial through torchrun (never forked: the launcher starts its own ranks), its
        ranks' results merged into one (``autoclone.launcher``)."""
        start = time.monotonic()
        timed_out = launching.launch(self.nproc, project / self.cwd, env, trial, timeout)
        lifecycle.check()
        seconds = time.monotonic() - start
        said = outputs.tail(trial / "stderr")
        if timed_out:
            return RunResult("timeout", stderr=said, seconds=seconds)
        ranks = []
        for rank in range(self.nproc):
            result, stderr = launching.rank_files(trial, rank)
            text = launching.quiet(outputs.tail(stderr, 40000))[-20000:]
            ranks.append(_load(result, project, text, seconds, self.outer))
        return launching.merge(ranks, said)

    def _fresh(self, cwd: Path, env: dict[str, str], trial: Path, timeout: float) -> bool:
        """A new interpreter: the reference behaviour, and the fallback."""
        with open(trial / "stdout", "wb") as out, open(trial / "stderr", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-c", "from autoclone.zygote import fresh; fresh()"],
                cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True,
            )  # fmt: skip
            lifecycle.track(proc.pid)
            try:
                return _wait(proc, timeout)
            finally:
                lifecycle.untrack(proc.pid)

    def _forked(self, cwd: Path, env: dict[str, str], trial: Path, timeout: float) -> bool | None:
        """A child of the warm zygote; None when no zygote can serve (then run fresh)."""
        zygote = self._take_zygote(env)
        if zygote is None:
            return None
        timed_out = zygote.run(str(cwd), env, trial, timeout)
        if timed_out is None:
            self.warm = False
            zygote.stop()
        else:
            with self._lock:
                self._idle.append(zygote)
        return timed_out

    def _take_zygote(self, env: dict[str, str]) -> Zygote | None:
        """An idle zygote, or a new one: as many as trials running at once."""
        with self._lock:
            if not self.warm or not hasattr(os, "fork") or self._closed:
                return None
            if self._idle:
                return self._idle.pop()
        zygote = zygotes.take(env, self._session) or Zygote.start(env, self._session)
        with self._lock:
            if zygote is None:
                self.warm = False
            elif self._closed:  # closed while this one was starting: it must not linger
                zygote.stop()
                return None
            else:
                self._started.append(zygote)
        return zygote

    def close(self) -> None:
        """Stop every zygote that was started and remove the session directory."""
        with self._lock:
            started, idle = self._started, self._idle
            self._started, self._idle, self._closed = [], [], True
        busy = [zygote for zygote in started if zygote not in idle]
        for zygote in busy:  # all asked at once, then waited for
            zygote._send({"exit": True})
        for zygote in busy:
            zygote.stop()
        for zygote in idle:  # for the next runner of this process (``autoclone.zygotes``)
            zygotes.keep(zygote)
        self._removing.shutdown(wait=True)
        with self._tree_lock:
            if self._forget is not None:
                self._forget()

    def _environment(self, spec: RunSpec, project: Path, trial: Path) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.env)
        package_parent = str(Path(autoclone.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(
            [package_parent, *self._search_path(env.get("PYTHONPATH", ""), project)]
        )
        env.setdefault("OMP_NUM_THREADS", "1")
        if self.jobs * self.nproc > 1:  # never more torch threads than cores, all together
            share = max(1, (os.cpu_count() or 1) // (self.jobs * self.nproc))
            asked = env["OMP_NUM_THREADS"]
            env["OMP_NUM_THREADS"] = str(min(share, int(asked) if asked.isdigit() else 1))
        env.setdefault("PYTHONHASHSEED", "0")
        for name, value in _OFFLINE.items():  # a trial never logs to, or fetches from, a
            env.setdefault(name, value)  # service: the user's runs are theirs to publish
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        temp = os.path.realpath(trial / "tmp")  # removed with the trial, with all left in it
        env.update({"TMPDIR": temp, "TEMP": temp, "TMP": temp})
        env[isolation.MODE_VAR] = self.mode()
        env[network.ALLOW_VAR] = "1" if self.online else ""
        env.update(
            {
                "AUTOCLONE_PARENT": str(os.getpid()),
                "AUTOCLONE_SESSION": str(self._session),
                "AUTOCLONE_RESULT": str(trial / "result.json"),
                "AUTOCLONE_SCRIPT": str(project / self.script),
                "AUTOCLONE_MODULE": self.module,
                "AUTOCLONE_ROOT": str(project),
                "AUTOCLONE_USER_ROOT": str(self.root.resolve()),
                "AUTOCLONE_OUTER": json.dumps(sorted(self.outer)),
                "AUTOCLONE_ARGV": json.dumps(list(self.argv)),
                "AUTOCLONE_MODE": spec.mode,
                "AUTOCLONE_SITES": ",".join(sorted(spec.sites)),
                "AUTOCLONE_LIMIT": "" if spec.limit is None else str(spec.limit),
                "AUTOCLONE_PAST_CONFLICT": str(spec.past_conflict or ""),
                "AUTOCLONE_RUN_ON": str(spec.run_on or ""),
                "AUTOCLONE_OVERRIDES": json.dumps({**spec.options, **self.overrides}),
            }
        )
        return env

    def _search_path(self, value: str, project: Path) -> list[str]:
        """The user's ``PYTHONPATH`` as their shell's ``python`` reads it: a relative entry
        from where they stand (not from wherever the trial's interpreter starts), and an
        entry into the project made the trial's copy of that folder, so that the trial
        imports the copy it edits, never the user's own files."""
        root = self.root.resolve()
        cwd = self.user_cwd or Path.cwd()
        out = []
        for entry in value.split(os.pathsep):
            if not entry:
                continue
            path = os.path.abspath(os.path.join(cwd, entry))
            real = Path(os.path.realpath(path))
            out.append(str(project / real.relative_to(root)) if real.is_relative_to(root) else path)
        return out


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the script; on timeout kill its whole process group. Always reap stragglers."""
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:  # also on a stop signal: no trial may outlive autoclone
        lifecycle.kill_group(proc.pid)
        proc.wait()
    return timed_out


#: Free space the trials' copy of the folder must leave on the temporary directory's disk.
_MARGIN = 1 << 30

#: The longest temp directory a trial gets: multiprocessing binds AF_UNIX sockets (at most
#: 107 bytes) at ``$TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX``; a nested trial folder in a
#: long TMPDIR would break every DataLoader with workers.
_TEMP_ROOM = 64


def _short_temp() -> str:
    """A trial's own TMPDIR: flat in the temp directory, or in /tmp where that is long."""
    base = tempfile.gettempdir()
    if len(base) + len("/acXXXXXXXX") > _TEMP_ROOM and os.access("/tmp", os.W_OK):
        base = "/tmp"
    return tempfile.mkdtemp(prefix="ac", dir=base)


def _remove(path: Path) -> None:
    """Remove a trial's folder, also where the script made parts of it read-only."""
    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IRWXU)
    for directory, names, _ in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(directory, name), stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)


def _relative(
    frames: Any, project: Path, outer: Mapping[str, str] | None = None
) -> tuple[tuple[str, int], ...]:
    """Frames in the copy become frames in the user's project, frames in the user's
    files outside it their names relative to the root (``outer``); library frames keep
    their paths."""
    out = []
    prefix = str(project) + os.sep
    for file, line in frames or ():
        if file.startswith(prefix):  # ``exp/../lib/m.py``, via ``sys.path.insert(0, '../lib')``
            out.append((os.path.normpath(file[len(prefix) :]).replace(os.sep, "/"), int(line)))
        elif outer and file in outer:
            out.append((outer[file], int(line)))
        else:
            out.append((file, int(line)))
    return tuple(out)


def _relative_diagnosis(value: Any, project: Path, outer: Mapping[str, str] | None = None) -> Any:
    """Every ``frames`` list in the tracer's diagnosis, relative to the project."""
    if isinstance(value, dict):
        return {
            k: _relative(v, project, outer)
            if k.endswith("frames")
            else _relative_diagnosis(v, project, outer)
            for k, v in value.items()
        }
    if isinstance(value, list):  # the readers of a carried node: a list of such dicts
        return [_relative_diagnosis(v, project, outer) for v in value]
    return value


#: Online loggers and model hubs, offline in every trial unless the user's environment
#: says otherwise (Weights & Biases, Hugging Face Hub, transformers, datasets, Comet).
_OFFLINE = {"WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", "COMET_MODE": "offline"}  # fmt: skip

#: Bytes of a run's stdout kept on its result (its end).
_STDOUT_KEPT = 65536


def _load(
    result_file: Path,
    project: Path,
    stderr: str,
    seconds: float,
    outer: Mapping[str, str] | None = None,
) -> RunResult:
    try:
        data = json.loads(result_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return RunResult("crash", stderr=stderr, seconds=seconds)
    error, conflict = data.get("error"), data.get("conflict") or {}
    code = int(data.get("exit_code") or 0)
    info = _error(error, project, outer) if error else None
    if not error and data["status"] == "exit":
        info = _exit_info(code, stderr)
    return RunResult(
        status=data["status"],
        backward=data["backward"],
        losses=tuple(data["losses"]),
        grads=tuple(tuple(g) for g in data["grads"]),
        error=info,
        forward_frames=_relative(data["forward_frames"], project, outer),
        forward_op=data.get("forward_op", ""),
        diagnosis=_relative_diagnosis(data.get("diagnosis"), project, outer),
        warnings=tuple(_relative_diagnosis(w, project, outer) for w in data.get("warnings", [])),
        stderr=stderr,
        seconds=seconds,
        script_seconds=float(data.get("script_seconds", 0.0)),
        exit_code=code,
        cuda_mapped=int(data.get("cuda_mapped") or 0),
        peak_mb=float(data.get("peak_mb") or 0.0),
        reached=dict(data.get("reached") or {}),
        unreached=dict(data.get("unreached") or {}),
        ungraded=dict(data.get("ungraded") or {}),
        call_reach=tuple(data.get("call_reach") or ()),
        steps_after=tuple(map(tuple, data.get("steps_after") or ())),
        opt_grads=tuple(data.get("opt_grads") or ()),
        label_grads=tuple(_relative(data.get("label_grads") or [], project, outer)),
        score_weights=tuple(_relative(data.get("score_weights") or [], project, outer)),
        other_conflict=int(data.get("other_conflict", -1)),
        conflict=_error(conflict["error"], project, outer) if conflict else None,
        conflict_backward=int(conflict.get("backward", 0)),
        conflict_diagnosis=_relative_diagnosis(conflict.get("diagnosis"), project, outer),
        copied=tuple(_relative(data.get("copied") or [], project, outer)),
        executed=_lines_executed(data.get("executed"), project, outer),
        conflict_executed=_lines_executed(conflict.get("executed"), project, outer),
        writes=_relative_lines(data.get("writes"), project, outer),
        refused=_relative_diagnosis(data.get("refused"), project, outer),
        hosts=_relative_lines(data.get("hosts"), project, outer),
        forward=_forward(data.get("forward_reference")),
    )


def _forward(data: Mapping[str, Any] | None) -> RunResult | None:
    """The numbers of the fork's forward reference (``autoclone.child_fork``)."""
    if not data:
        return None
    return RunResult(status=data["status"], backward=data["backward"],
                     losses=tuple(data["losses"]), grads=tuple(tuple(g) for g in data["grads"]),
                     call_reach=tuple(data.get("call_reach") or ()),
                     opt_grads=tuple(data.get("opt_grads") or ()))  # fmt: skip


def _lines_executed(
    lines: Any, project: Path, outer: Mapping[str, str] | None
) -> frozenset[tuple[str, int]] | None:
    return None if lines is None else frozenset(_relative(lines, project, outer))


def _relative_lines(
    lines: Mapping[str, Any] | None, project: Path, outer: Mapping[str, str] | None
) -> dict[str, tuple[str, int]]:
    """What the audit hook saw (a path written, a host reached) -> the user's line."""
    return {key: _relative([where], project, outer)[0] for key, where in (lines or {}).items()}


def _outside(trial: Path, writes: Mapping[str, tuple[str, int]]) -> tuple[isolation.Change, ...]:
    """What the run wrote outside its copy: the overlays' record (a timeout's too), each
    path with the user's line the audit hook saw; without overlays (the guard, or the
    user's ``--allow-outside-writes``), the hook's record alone."""
    if (trial / isolation.LAYERS).exists():
        return tuple(isolation.changes(trial, {p: w for p, w in writes.items() if w[0]}))
    return tuple(isolation.Change(path, "wrote", *where) for path, where in writes.items())


def _error(
    error: dict[str, Any], project: Path, outer: Mapping[str, str] | None = None
) -> ErrorInfo:
    frames = _relative(error["frames"], project, outer)
    return ErrorInfo(error["type"], error["message"], frames, str(error.get("found") or ""),
                     bool(error.get("grad_off")))  # fmt: skip


def _exit_info(code: int, stderr: str) -> ErrorInfo:
    """``sys.exit(3)`` carries no message: say what happened, with the script's last
    words if it printed any (``sys.exit("bad config")``, an argparse usage error)."""
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    said = f" (its last output: {last[:200]!r})" if last else ""
    return ErrorInfo("SystemExit", f"the script exited with code {code} before any autograd "
                     f"error{said}")  # fmt: skip
