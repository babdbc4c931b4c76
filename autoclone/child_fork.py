"""The failing step's forward reference, from a fork of the traced run.

Autograd refuses some writes where they are made, in the forward pass: into a leaf that
requires grad (or a view of one), into an output of ``unbind``/``split``/``chunk``, into a
view made under ``no_grad``. A repair of such an error is judged by the failing step's loss
as the program computes it, with grad disabled (``FORWARD_REFERENCE``); that used to be a
run of its own. Here the traced run forks where the write is refused: the fork does that
write and the rest of the step with grad off, as the reference run would, writes the loss
of the step and leaves; the traced run waits for it and raises the refusal as before. The
values are the same as the reference run's (a value does not depend on whether autograd
records it), so the repair saves one run of the script.

A fork that runs to the script's end (no backward call after the write) is not taken: the
reference turns grad off from the failing step's start, where an attribution that needs grad
before a hand edit fails, and the repair then judges by what the program prints.

The fork is made only where it is safe: one thread in the process, one torch thread (a
fork keeps no other thread, and OpenMP's pool does not survive one), and it is killed if it
takes longer than the traced run had taken so far (then the reference run is made as
before). An output of a custom ``autograd.Function`` written in place is not forked: the
reference gives such an output a memory of its own from the failing step's start, which a
fork made in the middle of that step cannot.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from autoclone import classify as cls
from autoclone.child_references import writes_in_place

#: The refusals a fork can compute the reference of.
REFUSALS = frozenset({cls.LEAF_INPLACE, cls.MULTI_OUTPUT_VIEW, cls.NO_GRAD_VIEW})
#: The fork writes its result beside the traced run's, with this suffix.
SUFFIX = ".forward"
#: What the parent keeps of the fork's result (the reference's numbers).
KEPT = ("status", "backward", "losses", "grads", "call_reach", "opt_grads")
#: The least time a fork is given, in seconds of the clock.
LEAST_SECONDS = 5.0


def at_refusal(state: Any, become: Callable[[Any, Any], None]) -> Callable[..., tuple[bool, Any]]:
    """The tracer's handler for a torch call that raised (``trace_install._Watch``):
    ``(True, value)`` in the fork, where the write was done; ``(False, None)`` where the
    error is to be raised (the traced run, or a call that is not such a refusal).
    ``become(state, watch)`` makes the fork the reference run."""

    def refused(
        watch: Any, exc: BaseException, func: Any, args: Any, kwargs: Any
    ) -> tuple[bool, Any]:
        if state.forked or not _writes(func, args, kwargs) or not _safe():
            return False, None
        if cls.classify(str(exc)) not in REFUSALS:
            return False, None
        state.forked = True
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        seconds = max(LEAST_SECONDS, state.script_seconds())
        pid = os.fork()
        if pid == 0:  # the fork: the reference, from this write on
            _silence()
            become(state, watch)
            return True, func(*args, **(kwargs or {}))
        state.forward = _collect(pid, state.result_path + SUFFIX, seconds, state.watch)
        state.forward_error = exc  # the numbers hold only if the run ends with this error
        return False, None

    return refused


def _writes(func: Any, args: Any, kwargs: Any) -> bool:
    """The call that raised is the write itself (``x.clamp_``, ``x += y``, ``x[i] = v``,
    ``F.relu(x, inplace=True)``), not a call the refusal came out of (``loss.backward()``
    recomputing a checkpoint)."""
    if writes_in_place(getattr(func, "__name__", "")):
        return True
    return (kwargs or {}).get("inplace") is True or (len(args) > 1 and args[-1] is True)


def _safe() -> bool:
    """One thread, one torch thread, and not inside a backward call (a reentrant
    checkpoint's recomputation: the step's forward is over)."""
    try:
        import torch
    except ImportError:
        return False
    running = getattr(torch._C, "_current_graph_task_id", lambda: -1)
    return (hasattr(os, "fork") and threading.active_count() == 1
            and torch.get_num_threads() == 1 and running() == -1)  # fmt: skip


def _silence() -> None:
    """The fork prints nothing: what the script prints is the traced run's."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _collect(pid: int, path: str, seconds: float, watch: Any) -> dict[str, Any] | None:
    """Wait for the fork (killed after ``seconds``); its numbers, or None. What it wrote
    or reached outside the trial's copy joins the traced run's record."""
    deadline = time.monotonic() + seconds
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            break
        time.sleep(0.005)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        os.unlink(path)
    except (OSError, ValueError):
        return None
    if watch is not None:
        watch.seen.update({k: tuple(v) for k, v in (data.get("writes") or {}).items()})
        watch.hosts.update({k: tuple(v) for k, v in (data.get("hosts") or {}).items()})
        watch.refused = watch.refused or data.get("refused")
    return {key: data[key] for key in KEPT if key in data}
