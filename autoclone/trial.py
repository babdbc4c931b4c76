"""Run the user's script once, for real, without ever touching the user's folder.

Each run gets a fresh temporary copy of the project folder with the variant sources
(original, instrumented or patched) written over it, its own process group (so a
timeout kills every process the script started), and its own result file.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import autoclone

_IGNORED = shutil.ignore_patterns(
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "*.egg-info",
)


@dataclass(frozen=True)
class ErrorInfo:
    """The exception that ended a run, with frames relative to the project root."""

    type: str
    message: str
    frames: tuple[tuple[str, int], ...] = ()

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


@dataclass(frozen=True)
class RunSpec:
    """One execution: which sources, which mode, which sites, how many backward calls."""

    files: Mapping[str, str]  # relpath -> text written over the copy
    mode: str = "plain"
    sites: frozenset[str] = frozenset()
    limit: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)  # argparse defaults (shrunk)
    timeout: float | None = None  # None: the runner's


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
    runs: int = 0
    _idle: list[Zygote] = field(default_factory=list, repr=False)
    _started: list[Zygote] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run(self, spec: RunSpec) -> RunResult:
        with self._lock:
            self.runs += 1
        with tempfile.TemporaryDirectory(prefix="autoclone-") as tmp:
            project = Path(tmp) / "project"
            shutil.copytree(self.root, project, ignore=_IGNORED, symlinks=True)
            for rel, text in spec.files.items():
                target = project / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            return self._execute(spec, project, Path(tmp))

    def _execute(self, spec: RunSpec, project: Path, tmp: Path) -> RunResult:
        result_file = tmp / "result.json"
        stdout, stderr = tmp / "stdout", tmp / "stderr"
        env = self._environment(spec, project, result_file)
        start = time.monotonic()
        timeout = self.timeout if spec.timeout is None else spec.timeout
        timed_out = self._forked(project / self.cwd, env, stdout, stderr, timeout)
        if timed_out is None:
            timed_out = self._fresh(project / self.cwd, env, stdout, stderr, timeout)
        seconds = time.monotonic() - start
        text = stderr.read_text(encoding="utf-8", errors="replace")[-20000:]
        if timed_out:
            return RunResult("timeout", stderr=text, seconds=seconds)
        return _load(result_file, project, text, seconds)

    def _fresh(
        self, cwd: Path, env: dict[str, str], stdout: Path, stderr: Path, timeout: float
    ) -> bool:
        """A new interpreter: the reference behaviour, and the fallback."""
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-c", "from autoclone.child import main; main()"],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            return _wait(proc, timeout)

    def _forked(
        self, cwd: Path, env: dict[str, str], stdout: Path, stderr: Path, timeout: float
    ) -> bool | None:
        """A child of the warm zygote; None when no zygote can serve (then run fresh)."""
        zygote = self._take_zygote(env)
        if zygote is None:
            return None
        timed_out = zygote.run(str(cwd), env, str(stdout), str(stderr), timeout)
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
            if not self.warm or not hasattr(os, "fork"):
                return None
            if self._idle:
                return self._idle.pop()
        zygote = Zygote.start(env)
        with self._lock:
            if zygote is None:
                self.warm = False
            else:
                self._started.append(zygote)
        return zygote

    def close(self) -> None:
        """Stop every zygote that was started."""
        with self._lock:
            started, self._started, self._idle = self._started, [], []
        for zygote in started:
            zygote.stop()

    def _environment(self, spec: RunSpec, project: Path, result_file: Path) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.env)
        package_parent = str(Path(autoclone.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
        env.setdefault("OMP_NUM_THREADS", "1")
        if self.jobs > 1:  # never more torch threads than cores, all trials together
            share = max(1, (os.cpu_count() or 1) // self.jobs)
            asked = env["OMP_NUM_THREADS"]
            env["OMP_NUM_THREADS"] = str(min(share, int(asked) if asked.isdigit() else 1))
        env.setdefault("PYTHONHASHSEED", "0")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update(
            {
                "AUTOCLONE_RESULT": str(result_file),
                "AUTOCLONE_SCRIPT": str(project / self.script),
                "AUTOCLONE_ROOT": str(project),
                "AUTOCLONE_ARGV": json.dumps(list(self.argv)),
                "AUTOCLONE_MODE": spec.mode,
                "AUTOCLONE_SITES": ",".join(sorted(spec.sites)),
                "AUTOCLONE_LIMIT": "" if spec.limit is None else str(spec.limit),
                "AUTOCLONE_OVERRIDES": json.dumps({**spec.options, **self.overrides}),
            }
        )
        return env


class Zygote:
    """The parent's handle on ``autoclone.zygote``: one request, one forked trial."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    @classmethod
    def start(cls, env: dict[str, str]) -> Zygote | None:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from autoclone.zygote import serve; serve()"],
            cwd=tempfile.gettempdir(), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )  # fmt: skip
        zygote = cls(proc)
        if zygote._read(120.0) != {"ready": True}:
            zygote.stop()
            return None
        return zygote

    def _read(self, timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], max(timeout, 0.0))
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def run(self, cwd: str, env: dict[str, str], stdout: str, stderr: str, timeout: float
            ) -> bool | None:  # fmt: skip
        """Run one trial; True if it timed out, None if the zygote itself failed."""
        request = {"cwd": cwd, "env": env, "stdout": stdout, "stderr": stderr}
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except OSError:
            return None
        started = self._read(30.0)
        if not started or "pid" not in started:
            return None
        pid = int(started["pid"])
        try:
            done = self._read(timeout)
        finally:
            _kill_group(pid)  # on timeout, on Ctrl-C, and for anything the script left behind
        if done is None:
            return None if self._read(30.0) is None else True
        return False

    def stop(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(self.proc.pid)
            self.proc.wait()


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the script; on timeout kill its whole process group. Always reap stragglers."""
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:  # also on Ctrl-C: no trial may outlive autoclone
        _kill_group(proc.pid)
        proc.wait()
    return timed_out


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _relative(frames: Any, project: Path) -> tuple[tuple[str, int], ...]:
    """Frames in the copy become frames in the user's project; library frames keep paths."""
    out = []
    prefix = str(project) + os.sep
    for file, line in frames or ():
        rel = file[len(prefix) :] if file.startswith(prefix) else file
        out.append((rel.replace(os.sep, "/") if rel != file else file, int(line)))
    return tuple(out)


def _relative_diagnosis(value: Any, project: Path) -> Any:
    """Every ``frames`` list in the tracer's diagnosis, relative to the project."""
    if isinstance(value, dict):
        return {
            k: _relative(v, project) if k.endswith("frames") else _relative_diagnosis(v, project)
            for k, v in value.items()
        }
    return value


def _load(result_file: Path, project: Path, stderr: str, seconds: float) -> RunResult:
    try:
        data = json.loads(result_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return RunResult("crash", stderr=stderr, seconds=seconds)
    error = data.get("error")
    info = None
    if error:
        info = ErrorInfo(error["type"], error["message"], _relative(error["frames"], project))
    return RunResult(
        status=data["status"],
        backward=data["backward"],
        losses=tuple(data["losses"]),
        grads=tuple(tuple(g) for g in data["grads"]),
        error=info,
        forward_frames=_relative(data["forward_frames"], project),
        forward_op=data.get("forward_op", ""),
        diagnosis=_relative_diagnosis(data.get("diagnosis"), project),
        warnings=tuple(_relative_diagnosis(w, project) for w in data.get("warnings", [])),
        stderr=stderr,
        seconds=seconds,
        script_seconds=float(data.get("script_seconds", 0.0)),
    )
