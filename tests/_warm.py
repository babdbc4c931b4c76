"""Run ``python script.py args`` (or ``python -c code args``) forked from a warm interpreter.

A fresh ``python`` pays for ``import torch`` (a second or more here), and the script's
first ``optimizer.step()`` for ``torch._dynamo`` (about as much again), before the script
does any work of its own; the fixture tests run two or three such scripts per fixture. A
:class:`WarmPython` starts one interpreter (this file run as a script) that imports those
(:data:`PRELOAD`) and waits; each run is a fork of it that becomes what ``python
script.py args`` run in the given folder would be:

* ``sys.argv`` is ``[script, *args]`` (``["-c", *args]`` for code), ``sys.path[0]`` the
  script's real folder (``""`` for code), the working directory the folder, a new
  ``__main__`` module (``__name__ == "__main__"``, ``__file__`` absolute as Python >= 3.9
  sets it), the code compiled with the script's absolute path as its file name;
* the environment is the one given (a server serves one environment: it was started with
  it, so ``OMP_NUM_THREADS`` and everything else read while torch was imported is what a
  fresh process would have read; another environment gets its own server), plus what the
  preloaded imports set in it (``TORCHINDUCTOR_CACHE_DIR``), as they would in the run;
* the modules the script imports from its folder are imported by the fork, never by the
  server, so nothing is cached from an earlier run; the random seeds Python, NumPy and
  torch pick at start are picked again (torch's only where a fresh process picks one: a
  build with a fixed default seed keeps it, the server draws no number);
* standard input is ``/dev/null``, standard output and error go to files, read completely
  once the run has ended (interpreter shutdown, ``atexit`` handlers and the final flush
  included: the fork leaves through the interpreter's own exit);
* the exit code is the script's (``SystemExit`` as Python handles it; an uncaught exception
  is printed by ``sys.excepthook`` without this file's frames, exit code 1; a signal gives
  ``-N`` as with :mod:`subprocess`);
* a run past its timeout is killed with its whole process group and
  :class:`subprocess.TimeoutExpired` is raised, as :func:`subprocess.run` raises it; what
  a run started is killed when it ends too (a fresh process would leave it running).

No fork where importing torch starts a thread (an OpenMP pool, ``OMP_NUM_THREADS`` above
1; the suite runs with 1): a fork keeps no thread, so those runs are fresh processes.
What a fork cannot make fresh: the hash seed (every run of one server shares it), what
the preloaded imports did before the script ran (``torch._dynamo`` and the modules it
pulls in are imported, and their warnings and ``warnings`` filters are in place, even
for a script that never steps an optimizer), and ``sys.orig_argv``.
"""

from __future__ import annotations

import json
import locale
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: What the server imports before it forks: torch, and what the first ``optimizer.step()``
#: imports (nothing that starts a thread or draws a random number: a fork keeps no thread).
PRELOAD = ("torch", "torch._dynamo")
_SERVER = Path(__file__).resolve()
_KEPT = 2  # servers kept at once (one per environment seen most recently)
#: Variables no interpreter reads at start, that pytest changes for every test: a server
#: started with another value serves them (each run still gets the value it was given).
_VOLATILE = frozenset({"PYTEST_CURRENT_TEST"})


class WarmPython:
    """Warm interpreters, one per environment, started lazily, closed by :meth:`close`."""

    def __init__(self, preload: Sequence[str] = PRELOAD) -> None:
        self.preload = tuple(preload)
        self._servers: dict[tuple[tuple[str, str], ...], _Server] = {}
        self._cold: set[tuple[tuple[str, str], ...]] = set()  # no fork for these (threads)
        self.forks = 0  # runs served by a fork (the others ran as fresh processes)

    def start(self, env: Mapping[str, str] | None = None) -> None:
        """Start the server for ``env`` (default: this process's) without waiting for it."""
        self._server(dict(os.environ if env is None else env))

    def run(
        self,
        args: Sequence[str],
        cwd: str | os.PathLike[str],
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``subprocess.run([sys.executable, *args], cwd=cwd, env=env, stdin=DEVNULL,
        capture_output=True, text=True, timeout=timeout)``, forked from a warm interpreter
        where ``args`` is ``script.py ...`` or ``-c code ...``. Anything else (``-m``,
        options) runs in a fresh process, and so does every run in an environment where
        importing torch starts a thread (``OMP_NUM_THREADS`` above 1: no fork is safe)."""
        environ = dict(os.environ if env is None else env)
        argv = list(args)
        if argv and argv[0] == "-c" and len(argv) >= 2:
            request = {"code": argv[1], "argv": ["-c", *argv[2:]]}
        elif argv and not argv[0].startswith("-"):
            request = {"script": argv[0], "argv": argv}
        else:
            request = None
        server = self._server(environ) if request is not None else None
        if server is None or request is None or not server.wait_ready():
            return subprocess.run(
                [sys.executable, *argv], cwd=cwd, env=environ, stdin=subprocess.DEVNULL,
                capture_output=True, text=True, timeout=timeout,
            )  # fmt: skip
        self.forks += 1
        return server.run(request, [sys.executable, *argv], Path(cwd), environ, timeout)

    def close(self) -> None:
        for server in self._servers.values():
            server.close()
        self._servers.clear()

    def _server(self, env: dict[str, str]) -> _Server | None:
        key = tuple(sorted((k, v) for k, v in env.items() if k not in _VOLATILE))
        if key in self._cold:
            return None
        server = self._servers.pop(key, None)
        if server is not None and server.refused:
            self._cold.add(key)
            server.close()
            return None
        if server is None or not server.alive():
            if server is not None:
                server.close()
            server = _Server(env, self.preload)
        self._servers[key] = server  # most recently used last
        while len(self._servers) > _KEPT:
            self._servers.pop(next(iter(self._servers))).close()
        return server


class _Server:
    def __init__(self, env: dict[str, str], preload: tuple[str, ...]) -> None:
        self.home = tempfile.mkdtemp(prefix="warm-python-")  # an empty folder: no module
        self.log = open(os.path.join(self.home, "server.log"), "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, str(_SERVER), *preload],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=self.home,
            env=env, start_new_session=True, bufsize=0,
        )  # fmt: skip
        self.ready = self.refused = self.closed = False
        self.runs = 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_ready(self) -> bool:
        """Whether it serves: False if importing started a thread (it has exited then)."""
        if not (self.ready or self.refused):
            reply = self._reply(600)
            self.ready, self.refused = bool(reply.get("ready")), not reply.get("ready")
        return self.ready

    def _reply(self, timeout: float | None) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], timeout)
        line = stdout.readline() if ready else b""
        if not line:
            log = self._log()
            self.close()
            raise RuntimeError(f"the warm python died or hung; its log:\n{log}")
        return json.loads(line)

    def _log(self) -> str:
        try:
            return Path(self.home, "server.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def run(
        self,
        request: dict[str, Any],
        args: list[str],
        cwd: Path,
        env: dict[str, str],
        timeout: float | None,
    ) -> subprocess.CompletedProcess[str]:
        self.runs += 1
        out = Path(self.home, f"{self.runs}.out")
        err = Path(self.home, f"{self.runs}.err")
        request.update(
            cwd=str(Path(cwd).absolute()), env=env, stdout=str(out), stderr=str(err),
            timeout=timeout,
        )  # fmt: skip
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(request).encode() + b"\n")
        reply = self._reply(None if timeout is None else timeout + 60)
        stdout, stderr = _text(out), _text(err)
        out.unlink(missing_ok=True)
        err.unlink(missing_ok=True)
        if reply.get("timeout"):
            raise subprocess.TimeoutExpired(args, timeout or 0.0, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess(args, reply["status"], stdout, stderr)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()  # end of file: the server kills its run and exits
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)


def _text(path: Path) -> str:
    """What ``subprocess.run(..., text=True)`` makes of the bytes: the locale's encoding,
    universal newlines."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------------------- the server
# Below runs in the server (this file as a script) and in its forks, never in pytest.


def _serve(preload: list[str]) -> None:
    import importlib

    # The protocol on descriptors of its own; 0, 1 and 2 are what a run will get.
    requests, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # anything the imports print goes to the log, not into the protocol
    os.close(null)
    environ = dict(os.environ)
    for name in preload:
        importlib.import_module(name)
    set_by_imports = {k: v for k, v in os.environ.items() if environ.get(k) != v}
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads != 1:  # an OpenMP pool (OMP_NUM_THREADS > 1): a fork would keep no thread
        os.write(replies, json.dumps({"ready": False, "threads": threads}).encode() + b"\n")
        return
    os.write(replies, b'{"ready": true}\n')
    pending = b""
    while True:
        while b"\n" not in pending:
            data = os.read(requests, 1 << 20)
            if not data:
                return  # pytest is done (or died): nothing is running
            pending += data
        line, pending = pending.split(b"\n", 1)
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            os.close(requests)
            os.close(replies)
            _child(request, set_by_imports)  # never returns: leaves through the interpreter's exit
        status, timed_out = _wait(pid, requests, request.get("timeout"))
        os.write(replies, json.dumps({"status": status, "timeout": timed_out}).encode() + b"\n")


def _wait(pid: int, requests: int, timeout: float | None) -> tuple[int, bool]:
    """The run's exit code. Its process group is killed at the deadline, at once should
    pytest close the pipe (or write to it), and when the run has ended: nothing it started
    outlives it (its pid is only reaped after that, so the group cannot be another's)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        pidfd: int | None = os.pidfd_open(pid)  # readable once the run has ended
    except (AttributeError, OSError):
        pidfd = None  # an old kernel: look every 10 ms
    timed_out = False
    while True:
        left = 0.01 if pidfd is None else None
        if deadline is not None:
            left = max(0.0, min(1e9 if left is None else left, deadline - time.monotonic()))
        watched = [requests] if pidfd is None else [requests, pidfd]
        ready, _, _ = select.select(watched, [], [], left)
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            break  # ended (not reaped yet)
        if requests in ready:  # pytest went away, or asks to stop: end the run
            break
        if deadline is not None and time.monotonic() >= deadline:
            timed_out = True
            break
    if pidfd is not None:
        os.close(pidfd)
    _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), timed_out


def _kill_group(pid: int) -> None:
    for kill in (os.kill, os.killpg):  # the run itself too, should it not have its group yet
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _child(request: dict[str, Any], set_by_imports: dict[str, str]) -> None:
    """In the fork: become ``python script args`` (or ``python -c code args``) and run."""
    import importlib.machinery
    import io
    import types

    os.setsid()  # a group of its own: the timeout kills what it started too
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ.update({k: v for k, v in set_by_imports.items() if k not in request["env"]})
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = sys.__stdin__ = _stream(io, sys.stdin, 0, "r")  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = _stream(io, sys.stdout, 1, "w")  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = _stream(io, sys.stderr, 2, "w")  # type: ignore[misc]
    _reseed()
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=sys.modules["builtins"], __package__=None, __spec__=None)
    if "script" in request:
        name = os.path.abspath(request["script"])
        main.__dict__.update(
            __file__=name, __cached__=None,
            __loader__=importlib.machinery.SourceFileLoader("__main__", name),
        )  # fmt: skip
        sys.path[0] = os.path.dirname(os.path.realpath(name))
    else:
        name = "<string>"
        main.__dict__.update(__loader__=importlib.machinery.BuiltinImporter)
        sys.path[0] = ""
    sys.argv = list(request["argv"])
    sys.modules["__main__"] = main
    importlib.invalidate_caches()
    try:
        if "script" in request:
            with open(name, "rb") as file:
                source: bytes | str = file.read()
        else:
            source = request["code"]
        code = compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as error:  # printed as Python prints it: no traceback, exit code 1
        error.__traceback__ = None
        sys.excepthook(type(error), error, None)
        raise SystemExit(1) from None
    except OSError as error:
        print(f"{sys.executable}: can't open file {name!r}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise  # the interpreter handles it, as it would in a fresh process
    except BaseException as error:  # noqa: BLE001 - printed like the interpreter does
        tb = error.__traceback__
        error.__traceback__ = tb = tb.tb_next if tb is not None else None  # not this frame
        sys.excepthook(type(error), error, tb)
        if isinstance(error, KeyboardInterrupt):
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        raise SystemExit(1) from None
    raise SystemExit  # the script's end: exit code 0, through the interpreter's own exit


def _stream(io: Any, old: Any, fd: int, mode: str) -> Any:
    """A new standard stream on ``fd`` made as the interpreter makes it (same encoding,
    errors and buffering as the server's: it was started with the same environment)."""
    unbuffered = getattr(old, "write_through", False)
    raw = io.FileIO(fd, mode + "b", closefd=False)
    if mode == "r":
        binary = io.BufferedReader(raw)
    else:
        binary = raw if unbuffered else io.BufferedWriter(raw)
    stream = io.TextIOWrapper(
        binary, encoding=old.encoding, errors=old.errors, newline=None if mode == "r" else "\n",
        line_buffering=fd == 2 or (mode == "w" and os.isatty(fd)), write_through=unbuffered,
    )  # fmt: skip
    stream.mode = mode
    return stream


#: The seed of torch's default generator in a fresh process of a build where it is fixed
#: (kept in a fork); a build that seeds it from the OS at start gets a new seed in every fork.
_TORCH_FIXED_SEED = 67280421310721


def _reseed() -> None:
    """Python, NumPy and (where a fresh process gets a random seed) torch seed from the OS
    at start: a fork would share the server's state, every run the same numbers."""
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    torch = sys.modules.get("torch")
    if torch is not None and torch.initial_seed() != _TORCH_FIXED_SEED:
        torch.default_generator.seed()  # the CPU's; CUDA's are made (and seeded) in the run


if __name__ == "__main__":
    _serve(sys.argv[1:])
