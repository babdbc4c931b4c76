"""A warm interpreter that forks one child per trial, so torch is imported once.

Importing torch and building the first optimizer (which pulls in ``torch._dynamo``)
costs two to three seconds, every trial. The zygote pays that once, before any CUDA
initialisation and with one OpenMP thread, then forks: each child gets its own session
(process group), working directory, environment, standard streams, temp directory and
fresh seeds, and runs exactly what a fresh ``autoclone.child`` process would.

Protocol, one JSON object per line: the parent sends ``{"cwd", "env", "stdout",
"stderr", "dir"}``; the zygote answers ``{"pid"}`` at once and ``{"status"}`` when the
child has exited. ``{"exit": true}`` ends the zygote.

Nothing a trial starts may outlive it. The zygote is a child subreaper, so a grandchild
that left the trial's process group (``setsid``) is re-parented here and killed with the
group when the trial ends. While a trial runs the zygote also watches its stdin: any
line from the parent aborts the trial, and end of file without ``exit`` means autoclone
died (even ``kill -9``), so the trial is killed at once and the session's temporary
directory removed before the zygote exits. Each trial also asks for SIGKILL should the
zygote itself die.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import json
import os
import select
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from autoclone import isolation
from autoclone.child_paths import remember_search_path, trial_search_path
from autoclone.lifecycle import (
    become_subreaper,
    die_with_parent,
    group_dies_with_parent,
    kept_from_outside,
    kill_group,
)
from autoclone.project import is_library


def _warm_up() -> None:
    """Import what every trial imports, without starting threads or touching CUDA."""
    import torch

    weight = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    weight.sum().backward()
    optimizer.step()
    import autoclone.child  # noqa: F401
    import autoclone.trace_install  # noqa: F401


#: Never imported ahead: they pick a GUI backend, start services or fork on import.
_NOT_AHEAD = (
    "matplotlib.pyplot", "pylab", "tkinter", "turtle", "wandb", "mlflow", "ray", "comet_ml",
    "neptune", "multiprocessing", "torch.distributed", "__future__", "autoclone",
)  # fmt: skip
#: Set when a warm import started a thread: the zygote re-executes itself without them.
COLD = "AUTOCLONE_COLD_IMPORTS"
_SERVE = "from autoclone.zygote import serve; serve()"


def script_imports(script: str, root: str, user: str = "") -> list[str]:
    """Modules the script imports at its top level (module body, ``try`` and ``if``
    blocks) that live outside its project: what every trial would import again. ``user``:
    the user's project folder, where an editable install may find the project's modules."""
    try:
        tree = ast.parse(Path(script).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    body = list(tree.body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, (ast.Try, ast.If)):
            body[:0] = [*node.body, *getattr(node, "orelse", [])]
    return [name for name in dict.fromkeys(names) if _outside(name, root, user)]


def _outside(name: str, root: str, user: str = "") -> bool:
    """An installed module, not one of the project's (nor one that must not go ahead):
    a module in the trial's copy (``root``), or one of the user's in their project
    (``user``, where an editable install finds it; not a library of a virtual
    environment kept there), is imported by each trial from its own copy."""
    top = name.split(".")[0]
    if any(name == bad or name.startswith(bad + ".") for bad in _NOT_AHEAD):
        return False
    if os.path.exists(os.path.join(root, top + ".py")) or os.path.isdir(os.path.join(root, top)):
        return False
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    origin = spec.origin if spec is not None else None
    if not origin:
        return False
    real = os.path.realpath(str(origin))
    if real.startswith(os.path.realpath(root) + os.sep):
        return False
    return not (user and real.startswith(os.path.realpath(user) + os.sep)) or is_library(
        Path(real)
    )


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _ahead(env: dict[str, str] | os._Environ[str]) -> list[str]:
    """The modules a zygote started for the runner of ``env`` imports ahead."""
    root = env.get("AUTOCLONE_ROOT", "")
    script = env.get("AUTOCLONE_SCRIPT", "")
    return script_imports(script, root, env.get("AUTOCLONE_USER_ROOT", "")) if root else []


def _warm_script_imports() -> list[str]:
    """Import the script's third-party modules once, so no trial pays for them. A module
    that fails to import is skipped (the trial meets its error itself); one that starts
    a thread makes the zygote start over without any (a fork keeps no threads). Returns
    the modules it tried: what another runner's script must import for this zygote to
    serve it (``_fits``)."""
    if os.environ.get(COLD):
        return []
    names = _ahead(os.environ)
    threads = _threads()
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001, S112 - its own trial will report it
            continue
    if _threads() > threads:
        os.environ[COLD] = "1"
        os.execv(sys.executable, [sys.executable, "-c", _SERVE])
    return names


def _fits(env: dict[str, str], ahead: list[str], warm: set[str]) -> bool:
    """Whether a zygote started for the runner of ``env`` (another runner of the same
    process, with the same interpreter and environment: ``autoclone.zygotes``) would have
    imported what this one imported ahead, read with that runner's own search path: the
    same modules beyond those the warm-up had imported (``warm``; importing those again
    does nothing), in the same order. Then this zygote is what that one would be: it may
    fork that runner's trials."""
    if os.environ.get(COLD):
        return False
    kept = list(sys.path)
    sys.path[:] = trial_search_path(env.get("PYTHONPATH", ""))
    try:
        asked = [name for name in _ahead(env) if name not in warm]
        return asked == [name for name in ahead if name not in warm]
    except Exception:  # noqa: BLE001 - undecided is no
        return False
    finally:
        sys.path[:] = kept


def _child(request: dict[str, Any], zygote: int) -> None:
    """In the fork: become what a fresh process would be, then run the trial."""
    code = 1
    try:
        die_with_parent(zygote)
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # gettempdir() reads the trial's own TMPDIR again
        stdin = os.open(os.devnull, os.O_RDONLY)
        stdout = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        stderr = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own stream
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        from autoclone.child import main

        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - nothing left to report to
                pass
        os._exit(code)


def fresh() -> None:
    """A trial in a new interpreter (where there is no fork): its process group dies
    with autoclone, as a forked trial's does with the zygote."""
    parent = os.environ.get("AUTOCLONE_PARENT", "")
    trial = os.path.dirname(os.environ.get("AUTOCLONE_RESULT", ""))
    leftovers = [os.environ.get("TMPDIR", ""), trial, os.environ.get("AUTOCLONE_SESSION", "")]
    if parent.isdigit():
        folders = [folder for folder in leftovers if folder]
        if isolation.entering():
            kept_from_outside(int(parent), folders)
        else:
            group_dies_with_parent(int(parent), folders)
    from autoclone.child import main

    main()


class _Input:
    """Lines from the parent, read from fd 0 without Python's buffering, so that
    ``select`` on the descriptor tells the truth about what is waiting."""

    def __init__(self) -> None:
        self.buffer = b""
        self.closed = False

    def has_line(self) -> bool:
        return b"\n" in self.buffer

    def fill(self) -> None:
        data = os.read(0, 65536)
        self.buffer += data
        self.closed = not data

    def line(self) -> dict[str, Any] | None:
        """The next request; None at end of input."""
        while not self.has_line() and not self.closed:
            self.fill()
        if not self.has_line():
            return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        return dict(json.loads(line))


def _await(pid: int, lines: _Input) -> int | None:
    """The trial's wait status, or None if the parent spoke (or died) first."""
    pidfd = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(pid)
    try:
        while not lines.has_line() and not lines.closed:
            watch = [0] if pidfd is None else [0, pidfd]
            ready, _, _ = select.select(watch, [], [], 0.05 if pidfd is None else None)
            if 0 in ready:
                lines.fill()
                continue
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
        return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _children() -> list[int]:
    """This process's children, as the kernel lists them."""
    me = os.getpid()
    try:
        text = Path(f"/proc/{me}/task/{me}/children").read_text()
        return [int(pid) for pid in text.split()]
    except (OSError, ValueError):
        pass
    out = []
    for entry in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(entry.read_text().rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry.parent.name))
    return out


def _end_trial(pid: int) -> None:
    """Kill the trial's group and every orphan re-parented here; reap them all."""
    kill_group(pid)
    while True:
        for child in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


#: The session directory of the runner this zygote serves (the one it was started for, or
#: the one that took it up last): removed should autoclone die
_session = {"dir": ""}


def _abandoned(request: dict[str, Any]) -> None:
    """The parent died: leave nothing behind (the trial's own TMPDIR, its folder, the
    session's), then go."""
    trial = request.get("dir")
    temp = os.path.realpath(os.path.join(trial, "tmp")) if trial else None
    for directory in (temp, trial, _session["dir"]):
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
    os._exit(0)


def serve() -> None:
    """Fork a child for each request until the parent says ``exit`` or goes away."""
    answer = sys.stdout
    sys.stdout = sys.stderr  # nothing but protocol lines may reach the parent
    remember_search_path()  # each trial replaces the first trial's PYTHONPATH with its own
    _session["dir"] = os.environ.get("AUTOCLONE_SESSION", "")
    _warm_up()
    warm = set(sys.modules)
    ahead = _warm_script_imports()
    os.chdir("/")  # the session's folder goes with its runner; the zygote may serve the next
    sys.stdout.flush()
    become_subreaper()
    print(json.dumps({"ready": True}), file=answer, flush=True)
    lines = _Input()
    me = os.getpid()
    request: dict[str, Any] | None = {}
    while (request := lines.line()) is not None and not request.get("exit"):
        if "adopt" in request:  # another runner asks whether this zygote fits its script
            fits = _fits(request["adopt"], ahead, warm)
            if fits:
                _session["dir"] = request["adopt"].get("AUTOCLONE_SESSION", "")
            print(json.dumps({"fits": fits}), file=answer, flush=True)
            continue
        pid = os.fork()
        if pid == 0:
            _child(request, me)
        print(json.dumps({"pid": pid}), file=answer, flush=True)
        status = _await(pid, lines)
        _end_trial(pid)
        if lines.closed:
            _abandoned(request)
        print(json.dumps({"status": -9 if status is None else status}), file=answer, flush=True)
    if request is None:
        _abandoned({})
    os._exit(0)  # an interpreter holding torch takes a second or more to tear down


if __name__ == "__main__":
    serve()
