"""A warm interpreter that forks one child per trial, so torch is imported once.

Importing torch and building the first optimizer (which pulls in ``torch._dynamo``)
costs two to three seconds, every trial. The zygote pays that once, before any CUDA
initialisation and with one OpenMP thread, then forks: each child gets its own session
(process group), working directory, environment, standard streams and fresh seeds, and
runs exactly what a fresh ``autoclone.child`` process would.

Protocol, one JSON object per line: the parent sends ``{"cwd", "env", "stdout",
"stderr"}``; the zygote answers ``{"pid"}`` at once and ``{"status"}`` when the child
has exited. End of input ends the zygote.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _warm_up() -> None:
    """Import what every trial imports, without starting threads or touching CUDA."""
    import torch

    weight = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    weight.sum().backward()
    optimizer.step()
    import autoclone.child  # noqa: F401
    import autoclone.tracer  # noqa: F401


def _child(request: dict[str, Any]) -> None:
    """In the fork: become what a fresh process would be, then run the trial."""
    code = 1
    try:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
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


def serve() -> None:
    """Fork a child for each request line until the parent closes our stdin."""
    _warm_up()
    answer = sys.stdout
    sys.stdout = sys.stderr  # nothing but protocol lines may reach the parent
    print(json.dumps({"ready": True}), file=answer, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"pid": pid}), file=answer, flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": status}), file=answer, flush=True)


if __name__ == "__main__":
    serve()
