"""Watch autograd during one run and name both ends of an in-place conflict.

Runs inside the trial process (``autoclone.child``), never in a patch. Two probes:

* saved-tensor hooks record, for every tensor autograd saves, its version, storage,
  shape, the op and the user's frames. While such hooks are set PyTorch no longer
  checks versions, so the unpack hook compares them itself and raises the error
  PyTorch would have raised. The hook packs ``t.detach()`` (same storage, same version
  counter) in a small holder: packing ``t`` itself leaks through a C++ reference cycle.
* a ``TorchFunctionMode`` compares the versions of arguments whose storage holds live
  saved tensors before and after each call, so every in-place write that matters
  (``__setitem__``, ``add_``, ``inplace=True``, ``_foreach_*_``) is recorded with the
  user's frames. It is cheaper than a dispatch mode, which would also see writes inside
  C++ composites but stops ``_foreach_*_`` from bumping versions.

Known limits: ``torch.func`` transforms refuse saved-tensor hooks (the caller reruns
without the tracer), and user threads are not seen (hooks are thread-local).
"""

from __future__ import annotations

import itertools
import sys
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

Frame = tuple[str, int]
_STAMP = "autoclone"

#: Ops whose outputs are several views of one input (the multi-output view error).
_MULTI_VIEW = frozenset({"unbind", "split", "chunk", "tensor_split", "split_with_sizes"})


@dataclass
class Saved:
    """A tensor autograd saved for backward."""

    version: int
    storage: int
    shape: list[int]
    op: str
    frames: list[Frame]
    epoch: int
    grad_fn: str = ""  # the node that saved it
    producer: str = ""  # the node that made it, as PyTorch's own message names it


@dataclass
class Mutation:
    """An in-place write into a storage that held saved tensors."""

    storage: int
    before: int
    after: int
    op: str
    frames: list[Frame]
    epoch: int
    module: str = ""
    module_frames: list[Frame] = field(default_factory=list)
    through_view: bool = False  # written through a view: cloning that view loses the write
    optimizer: bool = False  # written by an optimizer's step


class _Holder:
    """What the pack hook returns: the detached tensor and where its record lives."""

    __slots__ = ("tensor", "record", "__weakref__")

    def __init__(self, tensor: torch.Tensor, record: int) -> None:
        self.tensor = tensor
        self.record = record


def _storage(t: torch.Tensor) -> int:
    try:
        return int(t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):
        return id(t)


def _may_write(name: str, kwargs: Any) -> bool:
    """Only these calls can write into their arguments, by PyTorch's naming rules: a
    trailing underscore, in-place operators, item assignment, ``inplace=``/``out=``."""
    return (
        name.endswith("_")
        or name.startswith("__i")
        or name == "__setitem__"
        or bool(kwargs and ("inplace" in kwargs or "out" in kwargs))
    )


def _grad_fn(value: Any) -> Any:
    """``value.grad_fn`` without side effects: for a view made under no_grad whose base
    was later written, merely reading ``grad_fn`` raises, and the tracer must never
    raise where the user's script would not."""
    if not isinstance(value, torch.Tensor):
        return None
    try:
        return value.grad_fn
    except RuntimeError:
        return None


def _tensors(args: Any, kwargs: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    for value in itertools.chain(args, (kwargs or {}).values()):
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(v for v in value if isinstance(v, torch.Tensor))
    return found


class Tracer:
    """Records saves and mutations; ``diagnosis`` holds the conflict once found."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.epoch = 0
        self.saved: dict[int, Saved] = {}
        self.live: dict[int, int] = {}  # storage -> live saved tensors in it
        self.mutations: list[Mutation] = []
        self.views: dict[int, tuple[Any, list[Frame], str, str]] = {}
        self.modules: dict[int, list[Frame]] = {}
        self.module_stack: list[Any] = []
        self.diagnosis: dict[str, Any] | None = None
        self.backward_frames: list[Frame] = []  # where the last backward call was made
        self.holders: dict[int, Any] = {}  # record key -> weak reference to its holder
        self.warnings: list[dict[str, Any]] = []  # writes PyTorch cannot see
        self._counter = itertools.count()
        self._op = ""
        self._new: list[int] = []
        self._cached: list[Frame] | None = None
        self.broken = ""  # the tracer's own failure, if any: the run goes on untraced

    # -- frames --------------------------------------------------------------------------
    def frames(self, limit: int = 3) -> list[Frame]:
        """Innermost frames in the user's own files."""
        if self._cached is not None:
            return self._cached
        out: list[Frame] = []
        frame = sys._getframe(2)
        while frame is not None and len(out) < limit:
            if frame.f_code.co_filename.startswith(self.prefix):
                out.append((frame.f_code.co_filename, frame.f_lineno))
            frame = frame.f_back  # type: ignore[assignment]
        if self._op:
            self._cached = out
        return out

    # -- saved-tensor hooks --------------------------------------------------------------
    def pack(self, t: torch.Tensor) -> _Holder:
        key = next(self._counter)
        storage = _storage(t)
        self.saved[key] = Saved(
            t._version,
            storage,
            list(t.shape),
            self._op,
            self.frames(),
            self.epoch,
            producer=type(_grad_fn(t)).__name__ if _grad_fn(t) is not None else "",
        )
        self.live[storage] = self.live.get(storage, 0) + 1
        self._new.append(key)
        holder = _Holder(t.detach(), key)
        self.holders[key] = weakref.ref(holder)
        weakref.finalize(holder, self._release, key, storage)
        return holder

    def _release(self, key: int, storage: int) -> None:
        self.saved.pop(key, None)
        self.holders.pop(key, None)
        count = self.live.get(storage, 0) - 1
        if count > 0:
            self.live[storage] = count
        else:
            self.live.pop(storage, None)

    def unpack(self, holder: _Holder) -> torch.Tensor:
        t = holder.tensor
        record = self.saved.get(holder.record)
        if record is not None and t._version != record.version:
            self._diagnose_stale(record, t)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified "
                f"by an inplace operation: [{t.type()} {list(t.shape)}], which is output "
                f"0 of {record.producer or record.grad_fn or record.op}, is at version "
                f"{t._version}; expected "
                f"version {record.version} instead. (autograd check made by autoclone)"
            )
        return t

    def _diagnose_stale(self, record: Saved, t: torch.Tensor) -> None:
        writes = [
            m for m in self.mutations if m.storage == record.storage and m.after > record.version
        ]
        first = min(writes, key=lambda m: m.before) if writes else None
        self.diagnosis = {
            "kind": "inplace_version",
            "saved": asdict(record),
            "mutation": asdict(first) if first else None,
            "epoch": self.epoch,
        }

    # -- the op watcher ------------------------------------------------------------------
    def call(self, func: Any, args: Any, kwargs: Any) -> Any:
        name = getattr(func, "__name__", "") or str(func)
        if name == "__get__":  # attribute reads (.shape, .grad, .data) never write
            return func(*args, **(kwargs or {}))
        self._cached = None  # one walk of the stack per call, shared by its hooks
        watched = []
        if _may_write(name, kwargs):
            watched = [(t, t._version) for t in _tensors(args, kwargs) if _storage(t) in self.live]
        outer_op, outer_new = self._op, self._new
        self._op, self._new = name, []
        try:
            out = func(*args, **(kwargs or {}))
        except RuntimeError:
            self._diagnose_view_error(args)
            raise
        finally:
            created, self._op, self._new = self._new, outer_op, outer_new
        try:
            self._after_call(name, out, created, watched)
        except Exception as exc:  # noqa: BLE001 - the tracer must never break the script
            self.broken = self.broken or f"{type(exc).__name__}: {exc}"
        self._cached = None
        return out

    def _after_call(self, name: str, out: Any, created: list[int], watched: list[Any]) -> None:
        grad_fn = _grad_fn(out)
        self._stamp(out)
        if grad_fn is not None:
            for key in created:
                if key in self.saved:
                    self.saved[key].grad_fn = type(grad_fn).__name__
        for t, version in watched:
            if t._version != version:
                self._record_mutation(t, version, name)
                if self._unseen_by_autograd(_storage(t)):
                    self._warn("data_write", name, _storage(t))
        if name.startswith("_fused_"):  # fused optimizers write without bumping versions
            for t in {_storage(t): t for t, _ in watched}.values():
                self._warn("fused_optimizer", name, _storage(t))
        if name in _MULTI_VIEW and isinstance(out, tuple | list):
            self._remember_views(out, name, "multi_output_view")
        elif isinstance(out, torch.Tensor) and not torch.is_grad_enabled() and out._is_view():
            base = out._base
            if base is not None and base.requires_grad:
                self._remember_views([out], name, "no_grad_view")

    def _remember_views(self, views: Any, op: str, kind: str) -> None:
        """Views autograd will refuse to see written in place: where each was made."""
        frames = self.frames()
        for view in views:
            if isinstance(view, torch.Tensor):
                self.views[id(view)] = (weakref.ref(view), frames, op, kind)

    def _unseen_by_autograd(self, storage: int) -> bool:
        """A write whose storage holds saved tensors whose versions did not move: it went
        through ``.data`` (or another alias with its own counter), so backward will use
        the new values without any error."""
        for key, record in list(self.saved.items()):
            holder = self.holders.get(key)
            alive = holder() if holder is not None else None
            if record.storage == storage and alive is not None:
                return bool(alive.tensor._version == record.version)
        return False

    def _warn(self, kind: str, op: str, storage: int) -> None:
        saved = [r.frames for r in self.saved.values() if r.storage == storage]
        frames = self.frames()
        if any(w["kind"] == kind and w["frames"][:1] == frames[:1] for w in self.warnings):
            return  # one warning per line is enough
        first_save = saved[0] if saved else []
        self.warnings.append(
            {
                "kind": kind,
                "op": op,
                "frames": frames,
                "saved_frames": first_save,
                "epoch": self.epoch,
            }
        )

    def _stamp(self, out: Any) -> None:
        """Mark new graph nodes with the backward epoch and the line that created them;
        ``metadata`` lives on the C++ node, so the mark survives the Python wrapper."""
        for t in out if isinstance(out, tuple | list) else (out,):
            grad_fn = _grad_fn(t)
            if grad_fn is not None and _STAMP not in grad_fn.metadata:
                grad_fn.metadata[_STAMP] = (self.epoch, self.frames())

    def carry(self, roots: list[Any]) -> dict[str, Any] | None:
        """The edge where this backward call reaches into an earlier iteration's graph:
        a node made now consuming a value made before the last backward call. Nodes made
        inside a C++ op carry no mark of their own and inherit their consumer's."""
        queue = [(_grad_fn(t), None) for t in roots if _grad_fn(t) is not None]
        seen: set[int] = set()
        while queue:
            node, inherited = queue.pop(0)
            if id(node) in seen:
                continue
            seen.add(id(node))
            stamp = node.metadata.get(_STAMP) or inherited
            for child, _ in node.next_functions:
                if child is None or type(child).__name__ == "AccumulateGrad":
                    continue
                old = child.metadata.get(_STAMP)
                if stamp and old and old[0] < stamp[0]:
                    return {"consumer_frames": stamp[1], "producer_frames": old[1],
                            "consumer_epoch": stamp[0], "producer_epoch": old[0],
                            "node": type(node).__name__}  # fmt: skip
                queue.append((child, stamp))
        return None

    def backward_failed(self, roots: list[Any], message: str) -> None:
        """Called when a backward call raised: add the carry edge, if there is one."""
        edge = self.carry(roots)
        if "backward through the graph a second time" in message:
            self.diagnosis = {"kind": "backward_twice", "epoch": self.epoch,
                              "previous_backward_frames": self.backward_frames}  # fmt: skip
        if edge is not None and self.diagnosis is not None:
            self.diagnosis["carry"] = edge

    def _record_mutation(self, t: torch.Tensor, version: int, op: str) -> None:
        module = self.module_stack[-1] if self.module_stack else None
        if module is not None and id(module) not in self.modules:
            module = None  # the user's own module: the write is on a line of theirs anyway
        self.mutations.append(
            Mutation(
                _storage(t),
                version,
                t._version,
                op,
                self.frames(),
                self.epoch,
                type(module).__name__ if module is not None else "",
                self.modules.get(id(module), []) if module is not None else [],
                t._is_view(),
                _in_optimizer(),
            )
        )
        del self.mutations[:-256]  # only recent writes can explain the next stale read

    def _diagnose_view_error(self, args: Any) -> None:
        for t in _tensors(args, {}):
            entry = self.views.get(id(t))
            if entry is not None and entry[0]() is t:
                self.diagnosis = {
                    "kind": entry[3],
                    "view": {"frames": entry[1], "op": entry[2]},
                    "mutation": {"frames": self.frames(), "epoch": self.epoch},
                }
                return


def _in_optimizer() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if "/torch/optim/" in frame.f_code.co_filename.replace("\\", "/"):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


class _Watch(TorchFunctionMode):
    def __init__(self, tracer: Tracer) -> None:
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return self.tracer.call(func, args, kwargs)


def _track_modules(tracer: Tracer) -> None:
    """Where each module was built, and which module is running, for ``inplace=True``."""
    original_init = torch.nn.Module.__init__

    def init(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if type(self).__module__.startswith("torch."):
            tracer.modules.setdefault(id(self), tracer.frames(limit=1))

    torch.nn.Module.__init__ = init  # type: ignore[method-assign]
    from torch.nn.modules import module as module_mod

    def enter(module: torch.nn.Module, _inputs: Any) -> None:
        tracer.module_stack.append(module)

    def leave(module: torch.nn.Module, _inputs: Any, _output: Any) -> None:
        if tracer.module_stack and tracer.module_stack[-1] is module:
            tracer.module_stack.pop()  # a hook that returned a value would replace the output

    module_mod.register_module_forward_pre_hook(enter)
    module_mod.register_module_forward_hook(leave)


def install(prefix: str) -> Tracer:
    """Start tracing for the rest of the process; returns the tracer to read at the end."""
    tracer = Tracer(prefix)
    _track_modules(tracer)
    hooks = torch.autograd.graph.saved_tensors_hooks(tracer.pack, tracer.unpack)
    hooks.__enter__()
    _Watch(tracer).__enter__()
    return tracer
