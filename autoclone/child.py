"""The inside of one trial: the process that runs the user's script.

It is started by ``autoclone.trial`` with everything it needs in ``AUTOCLONE_*``
environment variables. It makes the run reproducible (seeds), installs the run-time
clone switch, counts backward calls so a run can stop as soon as it has shown enough,
records the numbers the oracle compares, and writes one JSON result file. Nothing here
prints to stdout: that stream belongs to the user's script. How it reports an error,
where its imports come from and what the reference modes change in torch are in
``child_errors``, ``child_paths`` and ``child_references``.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections
import contextlib
import functools
import json
import math
import os
import random
import resource
import runpy
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

from autoclone import child_fork, copies, devices, executed, isolation, labels, score_weights
from autoclone.child_errors import FRAME, error_info
from autoclone.child_paths import remember_search_path as remember_search_path  # the zygote's
from autoclone.child_paths import search_path as search_path  # re-exported, as before the split
from autoclone.child_paths import set_search_path
from autoclone.child_references import (
    function_outputs_unaliased,
    grad_stays_off,
    inplace_flags_off,
    leaf_writes_as_data,
    retained,
    storage_keyed_saved_tensors,
)

PLAIN = "plain"  # run as the user would
LOCATE = "locate"  # plain, plus the tracer: which line saved the tensor, which one wrote it
ANOMALY = "anomaly"  # plain, plus anomaly mode: the fallback where the tracer cannot run
REFERENCE = "reference"  # PyTorch's clone-on-mutation mode: what the user meant
#: The first ``limit`` steps as written, then the failing step's forward pass with grad
#: disabled: its values keep the program's aliasing, which the eager view errors forbid.
FORWARD_REFERENCE = "forward_reference"
#: Every backward call keeps its graph: what two backward calls over one graph in one
#: iteration compute when nothing frees the buffers in between.
RETAIN_REFERENCE = "retain_reference"
#: A run going on past its limit counts its ``run_on`` in the script's CPU seconds; the
#: clock ends it at this many times that (a script waiting on something, a loaded machine).
WALL_FACTOR = 3.0
#: The program as written, an in-place write into a leaf that requires grad (or into a
#: view of one) done as a plain data write, as under ``torch.no_grad()``: what a script
#: that edits weights by hand meant, computed without knowing which edit would say so
LEAF_DATA = "leaf_data"
#: Plain, with the target of every loss ``autoclone.labels`` watches detached where the
#: loss takes it: what a script whose targets are constants computes
CONSTANT_TARGETS = "constant_targets"
#: Plain, with every ``inplace=True`` given to a ``torch.nn.functional`` call (which
#: modules' flags are) turned off: the program an in-place activation promises to compute
INPLACE_OFF = "inplace_off"

#: Backward calls whose reach and following optimizer steps are recorded
_CALLS = 256


class _State:
    """What the result file will say; filled in as the script runs."""

    def __init__(self, result_path: str, limit: int | None, mode: str) -> None:
        self.result_path = result_path
        self.limit = limit
        self.mode = mode
        self.backward = 0
        self.losses: list[float] = []
        self.grads: list[list[float]] = []
        self.forward_frames: list[tuple[str, int]] = []
        self.forward_op = ""
        self.tracer: Any = None
        self.leaks: Any = None  # autoclone.leaks.Watcher, in the retained-graph reference
        self.started: float | None = None  # when the user's script began: its own time
        #: K: go on past the first version conflict for K backward calls (the tracer's
        #: copy-on-write), so the traced run also computes the reference numbers
        self.past = 0
        self.conflict: dict[str, Any] | None = None  # that conflict, once met
        #: Seconds a verification run goes on past ``limit``, looking for a later error
        #: (a second conflict at epoch 2); what it had at the limit is written first
        self.run_on = 0.0
        self.deadline: float | None = None
        #: Every leaf a backward call differentiated (weakly held, so an id a freed leaf
        #: leaves behind is not mistaken for it), by shape: what the program trains
        self.reached: dict[int, tuple[Any, str]] = {}
        #: ... and those a backward call left a gradient in (a custom Function's backward
        #: may return None for an input it reaches)
        self.graded: dict[int, Any] = {}
        #: The script's optimizers, held until the result is written (a script that ran to
        #: its end has dropped its own references by then); a few dozen at most
        self.optimizers: list[Any] = []
        #: Per backward call (the first ``_CALLS``): how many parameters of each optimizer (by
        #: index) it reached, and the optimizers that stepped after it, before the next
        self.call_reach: list[dict[str, int]] = []
        self.steps_after: list[list[int]] = []
        self.opt_grads: list[dict[str, list[Any]]] = []
        self._groups: dict[int, list[Any]] = {}
        self.watch: isolation.Watch | None = None  # who wrote outside the trial's copy
        self.labels: labels.Seen | None = None  # losses whose labels require grad
        self.scores: score_weights.Seen | None = None  # log-probabilities weighted with a graph
        self.executed: Any = None  # autoclone.executed.Executed, in traced runs
        self.copies: copies.Seen | None = None  # tensors with a graph copied by torch.tensor
        #: The failing step's forward reference a fork computed (``autoclone.child_fork``);
        #: ``forked``: no fork is to be made (any more)
        self.forward: dict[str, Any] | None = None
        self.forward_error: BaseException | None = None
        self.forked = True

    def note_reached(self, leaves: list[Any]) -> None:
        for leaf in leaves:
            if not self._was_reached(leaf):
                self.reached[id(leaf)] = (weakref.ref(leaf), _shape_key(leaf))

    def note_call(self, leaves: list[Any]) -> None:
        """Which optimizers this backward call gives gradients to (before it runs, so the
        call that fails is counted too)."""
        if len(self.call_reach) >= _CALLS:
            return
        ids = {id(leaf) for leaf in leaves}
        self._groups = {i: [p for group in optimizer.param_groups for p in group["params"]
                            if id(p) in ids] for i, optimizer in enumerate(self.optimizers)}
        self._groups = {i: params for i, params in self._groups.items() if params}
        self.call_reach.append({str(i): len(params) for i, params in self._groups.items()})
        self.steps_after.append([])

    def note_grads(self) -> None:
        """The gradient checksum of each optimizer's parameters this call reached, after
        it: a cut elsewhere may take some optimizers out of a call, and the others must
        still get the gradients they got."""
        if len(self.opt_grads) < len(self.call_reach):
            self.opt_grads.append({str(i): [_number(v) for v in _checksum(params)]
                                   for i, params in self._groups.items()})  # fmt: skip

    def note_step(self, optimizer: Any) -> None:
        """An optimizer stepped: after the last backward call made so far."""
        if 0 < self.backward <= len(self.steps_after):
            index = next((i for i, o in enumerate(self.optimizers) if o is optimizer), -1)
            if index >= 0 and index not in self.steps_after[self.backward - 1]:
                self.steps_after[self.backward - 1].append(index)

    def _was_reached(self, tensor: Any) -> bool:
        known = self.reached.get(id(tensor))
        return known is not None and known[0]() is tensor

    def _params(self) -> Iterator[Any]:
        """Every tensor the script's optimizers update (a tensor in two groups twice)."""
        for optimizer in self.optimizers:
            for group in optimizer.param_groups:
                yield from group["params"]

    def reached_shapes(self) -> dict[str, int]:
        """What backward calls differentiated, by shape: of a script with optimizers, the
        tensors they update (a feature extractor's parameters, which require grad but no
        optimizer steps, are not trained: activations cut from them lose nothing)."""
        trained = {id(p) for p in self._params()}
        return dict(collections.Counter(shape for key, (_, shape) in self.reached.items()
                                        if not trained or key in trained))  # fmt: skip

    def note_graded(self, leaves: list[Any]) -> None:
        for leaf in leaves:
            if id(leaf) not in self.graded and getattr(leaf, "grad", None) is not None:
                self.graded[id(leaf)] = weakref.ref(leaf)

    def ungraded_shapes(self) -> dict[str, int]:
        """Tensors an optimizer updates that backward calls reached and never left a
        gradient in: what a custom Function's ``None`` for a trained input does."""
        return dict(collections.Counter(
            _shape_key(p) for p in self._params()
            if p.requires_grad and self._was_reached(p) and not _held(self.graded, p)))  # fmt: skip

    def unreached_shapes(self) -> dict[str, int]:
        """Tensors an optimizer updates that no backward call reached: a block that cut
        them off (an edit under ``torch.no_grad()``) leaves them untrained for good."""
        return dict(collections.Counter(
            _shape_key(p) for p in self._params()
            if p.requires_grad and not self._was_reached(p)))  # fmt: skip

    def script_seconds(self) -> float:
        return 0.0 if self.started is None else time.perf_counter() - self.started

    def write(self, status: str, error: dict[str, Any] | None = None, code: int = 0) -> None:
        self._write({"status": status, "backward": self.backward, "losses": self.losses,
                     "grads": self.grads, "error": error, "exit_code": code,
                     "diagnosis": self.tracer.diagnosis if self.tracer is not None else None,
                     "conflict": self.conflict})  # fmt: skip

    def met_conflict(self) -> None:
        """The backward call just made went past the tracer's first version conflict:
        note it, write what the run would have written had it failed there (kept if a
        timeout ends the rest), and stop K backward calls later."""
        found, n = self.tracer.conflict, self.backward - 1
        self.forward = None  # the run's error is this conflict, not a refused write
        frames = [(f.filename, f.lineno or 0) for f in traceback.extract_stack()[:-2]]
        error = {"type": "RuntimeError", "message": found["message"], "frames": frames}
        self.conflict = {"error": error, "backward": n, "diagnosis": found["diagnosis"],
                         "executed": self._executed()}  # fmt: skip
        self._write({"status": "error", "backward": n, "losses": self.losses[: n + 1],
                     "grads": self.grads[:n], "error": error, "exit_code": 1,
                     "diagnosis": found["diagnosis"]})  # fmt: skip
        self.limit = n + self.past

    def _executed(self) -> list[tuple[str, int]] | None:
        return self.executed.snapshot() if self.executed is not None else None

    def _write(self, data: dict[str, Any]) -> None:
        data.update({
            "forward_frames": self.forward_frames,
            "forward_op": self.forward_op,
            "warnings": (self.tracer.warnings if self.tracer is not None else [])
            + (self.leaks.leaks() if self.leaks is not None else []),
            "script_seconds": self.script_seconds(),
            "cuda_mapped": devices.mapped(),  # calls moved from CUDA to the CPU
            "peak_mb": _peak_mb(),
            "reached": self.reached_shapes(),
            "unreached": self.unreached_shapes(),
            "ungraded": self.ungraded_shapes(),
            "call_reach": self.call_reach,
            "steps_after": self.steps_after,
            "opt_grads": self.opt_grads,
            "other_conflict": self.tracer.other_conflict if self.tracer is not None else -1,
            "label_grads": self.labels.lines if self.labels is not None else [],
            "score_weights": self.scores.lines if self.scores is not None else [],
            "executed": self._executed(),
            "copied": self.copies.lines if self.copies is not None else [],
            # the fork's numbers, where the run ends with the refusal it was made at
            "forward_reference": self.forward if data.get("status") == "error" else None,
            **(self.watch.result() if self.watch is not None else {}),
        })  # fmt: skip
        tmp = self.result_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, self.result_path)

    def at_limit(self) -> None:
        """Stop, or with ``run_on`` write the result as it stands (kept if the timeout
        ends the rest) and go on until the script ends, fails, or the time is up."""
        if self.run_on <= 0:
            self.stop()
        self.write("stopped")
        # the script's own CPU time, not the clock's: on a loaded machine a run gets fewer
        # seconds of CPU per second, and a second conflict at epoch 100 was met idle and
        # missed under load (the patch then left it for the user to meet)
        self.limit, self.deadline = None, time.process_time() + self.run_on
        # between backward calls (an evaluation pass, a hang) the clock ends it all the same
        ender = threading.Timer(WALL_FACTOR * self.run_on + 0.5, os._exit, args=(0,))
        ender.daemon = True
        ender.start()

    def stop(self) -> None:
        """Enough steps have been seen: leave at once, before the script can do more work."""
        self.write("stopped")
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream must not hide the result
                pass
        os._exit(0)


def _peak_mb() -> float:
    """This process's own peak resident memory (VmHWM). ``ru_maxrss`` is not: across exec
    it keeps the peak of the process that spawned the trial (a pytest worker, autoclone
    itself), which made a small fresh trial look as large as its parent."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _shape_key(tensor: Any) -> str:
    """``"16x8"``: how tensors are counted across processes (ids are not)."""
    return "x".join(map(str, tensor.shape))


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else repr(value)


def _leaves(roots: list[Any]) -> list[Any]:
    """Leaf tensors reachable from the roots: whose gradients this backward call fills."""
    seen: set[int] = set()
    stack = []
    for root in roots:
        try:
            stack.append(root.grad_fn)
        except (AttributeError, RuntimeError):  # reading grad_fn must never raise here
            continue
    leaves: dict[int, Any] = {}
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        variable = getattr(fn, "variable", None)
        if variable is not None:
            leaves[id(variable)] = variable
        stack.extend(next_fn for next_fn, _ in fn.next_functions)
    return list(leaves.values())


def _checksum(leaves: list[Any]) -> list[float]:
    total, absolute = 0.0, 0.0
    for leaf in leaves:
        grad = leaf.grad
        if grad is not None:
            grad = grad.detach().double()
            total += float(grad.sum())
            absolute += float(grad.abs().sum())
    return [total, absolute]


def _install_grad_watch(state: _State) -> None:
    """Tell the tracer about ``torch.autograd.grad`` calls that free their graph (a
    derivative taken without ``create_graph`` and then read by the loss)."""
    import torch

    original = torch.autograd.grad

    @functools.wraps(original)
    def grad(*args: Any, **kwargs: Any) -> Any:
        try:
            result = original(*args, **kwargs)
        except RuntimeError as exc:
            if state.tracer is not None:
                state.tracer.grad_failed(args[0] if args else kwargs.get("outputs"), str(exc))
            raise
        if state.tracer is not None:
            named = dict(zip(("retain_graph", "create_graph"), args[3:5], strict=False))
            state.tracer.grad_called({**named, **kwargs}, result,
                                     args[0] if args else kwargs.get("outputs"))
        return result

    torch.autograd.grad = grad


def _held(table: dict[int, Any], tensor: Any) -> bool:
    """``tensor`` itself is in a table of weak references by id (not a later tensor that
    took a freed one's id)."""
    known = table.get(id(tensor))
    return known is not None and known() is tensor


def _keeps_graph(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``torch.autograd.backward(tensors, grad_tensors, retain_graph, create_graph)``
    asked to keep the graph it runs through."""
    retain = kwargs.get("retain_graph", args[1] if len(args) > 1 else None)
    create = kwargs.get("create_graph", args[2] if len(args) > 2 else False)
    return bool(retain if retain is not None else create)


def _install_backward_counter(state: _State) -> None:
    """Wrap the one entry point that ``Tensor.backward`` and user code both go through."""
    import torch

    original = torch.autograd.backward
    running = getattr(torch._C, "_current_graph_task_id", lambda: -1)

    def backward(tensors: Any, *args: Any, **kwargs: Any) -> None:
        if running() != -1:  # inside a backward call: a reentrant checkpoint recomputing
            return original(tensors, *args, **kwargs)  # its block is part of the user's call
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        loss = sum(float(t.detach().double().sum()) for t in roots if isinstance(t, torch.Tensor))
        state.losses.append(_number(loss))  # type: ignore[arg-type]
        if state.mode == FORWARD_REFERENCE and state.backward == state.limit:
            state.stop()  # the loss of the step that failed, computed with grad off
        leaves = _leaves(roots)
        state.note_reached(leaves)
        state.note_call(leaves)
        if state.mode == RETAIN_REFERENCE:
            args, kwargs = retained(args, kwargs)
        if state.tracer is not None:
            state.tracer.backward_started(roots, frees=not _keeps_graph(args, kwargs))
        try:
            original(tensors, *args, **kwargs)
        except RuntimeError as exc:
            if state.tracer is not None:
                state.tracer.backward_failed(roots, str(exc))
            raise
        finally:
            if state.tracer is not None:
                state.tracer.in_backward = False
        state.backward += 1
        if state.tracer is not None:
            state.tracer.epoch = state.backward
            state.tracer.backward_frames = state.tracer.frames()
            state.tracer.backward_loss_frames = state.tracer.loss_frames
            state.tracer.steps_at_backward = state.tracer.steps
        state.grads.append([_number(v) for v in _checksum(leaves)])  # type: ignore[misc]
        state.note_grads()
        state.note_graded(leaves)
        if state.conflict is None and state.tracer is not None and state.tracer.conflict:
            state.tracer.conflict_passed(roots)
            state.met_conflict()
        if state.leaks is not None:
            state.leaks.backward(leaves)
        if state.mode == FORWARD_REFERENCE and state.backward == state.limit:
            grad_stays_off()
        elif state.limit is not None and state.backward >= state.limit:
            state.at_limit()
        elif state.deadline is not None and time.process_time() > state.deadline:
            state.stop()

    torch.autograd.backward = backward  # type: ignore[assignment]


def _install_optimizer_registry(state: _State) -> None:
    """Every optimizer the script makes (the first 64, held to the end): what it updates
    should be trained."""
    import torch

    original = torch.optim.Optimizer.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if len(state.optimizers) < 64:
            state.optimizers.append(self)

    torch.optim.Optimizer.__init__ = init  # type: ignore[method-assign]
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    register_optimizer_step_pre_hook(lambda optimizer, args, kwargs: state.note_step(optimizer))


#: A clone of a tensor larger than this is left out of a trial (``AUTOCLONE_CLONE_LIMIT_MB``
#: overrides): the every-clone trial of the search would otherwise hold a second copy of a
#: dataset kept in memory (3 GB -> 6 GB). Such a site then changes nothing, so the search
#: never keeps it; the clones that fix a conflict are of activations, far smaller.
CLONE_LIMIT_MB = 256.0


def _install_switch(enabled: frozenset[str]) -> None:
    """The run-time side of instrumentation: clone a value only if its site is enabled."""
    limit = float(os.environ.get("AUTOCLONE_CLONE_LIMIT_MB") or CLONE_LIMIT_MB) * (1 << 20)

    def switch(site_id: str, value: Any) -> Any:
        if site_id in enabled:
            torch = sys.modules.get("torch")
            if torch is not None and isinstance(value, torch.Tensor):
                if value.numel() * value.element_size() > limit:
                    return value
                return value.clone()
        return value

    builtins.__autoclone__ = switch  # type: ignore[attr-defined]


def _install_overrides(overrides: dict[str, str]) -> None:
    """``--set NAME=VALUE`` for argparse options: change the default, not the command line."""
    if not overrides:
        return
    original = argparse._ActionsContainer.add_argument

    def add_argument(self: Any, *args: Any, **kwargs: Any) -> Any:
        action = original(self, *args, **kwargs)
        if action.dest in overrides:
            raw = overrides[action.dest]
            action.default = action.type(raw) if callable(action.type) else _literal(raw)
        return action

    argparse._ActionsContainer.add_argument = add_argument  # type: ignore[method-assign]


def _literal(raw: str) -> Any:
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


def _capture_anomaly(state: _State) -> None:
    """Anomaly mode reports the forward line of the failing node as a warning; keep it."""
    import torch

    torch.autograd.set_detect_anomaly(True, check_nan=False)
    _keep_forward_frames(state)


def _keep_forward_frames(state: _State) -> None:
    """Keep the forward line anomaly mode reports for a failing node: the script's own
    anomaly mode (a NaN from a backward function) names it too."""
    shown = warnings.showwarning

    def showwarning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        text = str(message)
        if text.startswith("Error detected in"):
            state.forward_op = text.split()[3].rstrip(".")
            state.forward_frames = [(m["file"], int(m["line"])) for m in FRAME.finditer(text)]
        shown(message, category, *args, **kwargs)

    warnings.showwarning = showwarning


def _become_forward_reference(state: _State, watch: Any) -> None:
    """The fork ``autoclone.child_fork`` makes at a refused write: from here, the failing
    step's forward reference (``FORWARD_REFERENCE``), untraced, with grad off."""
    from autoclone.trace_install import plain_call

    sys.settrace(None)
    watch.call = plain_call
    state.tracer, state.executed, state.past, state.forward = None, None, 0, None
    state.mode, state.limit = FORWARD_REFERENCE, state.backward
    state.result_path += child_fork.SUFFIX
    function_outputs_unaliased()
    grad_stays_off()


def _seed() -> None:
    random.seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:
        pass
    import torch

    torch.manual_seed(0)


def _announce_start() -> None:
    """Tell the parent of a launched rank (``autoclone.launcher``) that the user's script
    begins: a launch's timeout counts from here, not from the ranks' own start-up."""
    marker = os.environ.get("AUTOCLONE_BEGAN")
    if marker:
        with contextlib.suppress(OSError):
            open(marker, "a").close()


def _own_files(env: os._Environ[str]) -> str | tuple[str, ...]:
    """What the tracer and the label watch take for the user's files: the copy, and the
    user's modules outside the project (``AUTOCLONE_OUTER``), which a trial loads from
    where they are. ``str.startswith``, the one use they make of it, takes a tuple."""
    root = (env.get("AUTOCLONE_ROOT") or os.path.dirname(env["AUTOCLONE_SCRIPT"])) + os.sep
    outer = json.loads(env.get("AUTOCLONE_OUTER") or "[]")
    return (root, *outer) if outer else root


def _run_script(script: str, argv: list[str], state: _State) -> None:
    module = os.environ.get("AUTOCLONE_MODULE", "")
    sys.argv = [script, *argv]
    # ``python -m`` puts the current folder first, ``python script.py`` the script's own
    sys.path[0] = os.getcwd() if module else os.path.dirname(script)
    state.started = time.perf_counter()
    _announce_start()
    try:
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        state.write("completed" if code == 0 else "exit", code=code)
        raise
    except BaseException as exc:  # noqa: BLE001 - every failure of the script is data
        if exc is not state.forward_error:
            state.forward = None
        state.write("error", error_info(exc), code=1)
        traceback.print_exc()
        sys.exit(1)
    state.write("completed")


def main() -> None:
    env = os.environ
    isolation.enter_from_env()  # before anything of the script's can run
    set_search_path(env)
    mode = env.get("AUTOCLONE_MODE", PLAIN)
    limit = int(env["AUTOCLONE_LIMIT"]) if env.get("AUTOCLONE_LIMIT") else None
    state = _State(env["AUTOCLONE_RESULT"], limit, mode)
    if env.get(isolation.MODE_VAR):
        state.watch = isolation.watch(env[isolation.MODE_VAR], env["AUTOCLONE_ROOT"] + os.sep,
                                      [env["AUTOCLONE_SESSION"], env["TMPDIR"],
                                       *isolation.shared()])  # fmt: skip
    state.run_on = float(env.get("AUTOCLONE_RUN_ON") or 0.0)
    sites = frozenset(filter(None, env.get("AUTOCLONE_SITES", "").split(",")))
    _install_switch(sites)
    _install_overrides(json.loads(env.get("AUTOCLONE_OVERRIDES", "{}")))
    _seed()
    devices.install()  # a GPU script on a machine without one: CUDA run on the CPU
    _install_backward_counter(state)
    _install_optimizer_registry(state)
    own = _own_files(env)
    state.labels = labels.install(own)
    state.scores = score_weights.install(own)
    state.copies = copies.install(own)
    if mode == ANOMALY:
        _capture_anomaly(state)
    elif mode == LOCATE:
        from autoclone.trace_install import install

        state.past = int(env.get("AUTOCLONE_PAST_CONFLICT") or 0)
        # the repair's first run: a write autograd refuses forks the step's reference
        state.forked = state.past <= 0
        state.tracer = install(own, child_fork.at_refusal(state, _become_forward_reference))
        state.executed = executed.install(own)
        _keep_forward_frames(state)
        state.labels.probe = state.tracer.note_target
        state.scores.weight_probe = state.tracer.note_weight
        _install_grad_watch(state)
        state.tracer.copy_on_write = state.past > 0
    elif mode == CONSTANT_TARGETS:
        state.labels.constant = True
    elif mode == RETAIN_REFERENCE:
        from autoclone import leaks

        state.leaks = leaks.install(own)
    argv = json.loads(env.get("AUTOCLONE_ARGV", "[]"))
    script = env["AUTOCLONE_SCRIPT"]
    if mode == REFERENCE:
        import torch

        storage_keyed_saved_tensors()
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            _run_script(script, argv, state)
    elif mode == FORWARD_REFERENCE:
        function_outputs_unaliased()
        if limit == 0:  # off from the step that failed
            grad_stays_off()
        _run_script(script, argv, state)
    elif mode == LEAF_DATA:
        with leaf_writes_as_data():
            _run_script(script, argv, state)
    elif mode == INPLACE_OFF:
        inplace_flags_off()
        _run_script(script, argv, state)
    else:
        _run_script(script, argv, state)


if __name__ == "__main__":
    main()
