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
  C++ composites but stops ``_foreach_*_`` from bumping versions, and sees every aten op
  of the backward pass too (``bench/dispatch_mode.py`` measures both).

Cost: most torch calls cannot write, so the mode decides from the function itself
(cached per function) and only then looks at arguments; attribute reads go straight
through. One stack walk per call is shared by its hooks, and line numbers are memoised
per (code, instruction): reading ``f_lineno`` scans the code's line table every time.
The running module is found by walking the stack when a write is recorded, instead of
global module hooks, which would put every module call on ``nn.Module``'s slow path. A
``torch.optim`` step taken while nothing saved is alive runs without the mode (see
``trace_install._quiet_optimizer_steps``): it could not record anything there.

Known limits: ``torch.func`` transforms refuse saved-tensor hooks (the caller reruns
without the tracer), and user threads are not seen (hooks are thread-local).

The records and the reads that never raise are in ``autoclone.trace_base``; naming a graph
carried in a module's attribute is ``autoclone.carried_state``; putting the probes in place
(``install``) is ``autoclone.trace_install``.
"""

from __future__ import annotations

import itertools
import re
import sys
import weakref
from dataclasses import asdict
from typing import Any

import torch

from autoclone import estimate, freed
from autoclone.carried_state import stale_module_state
from autoclone.derivatives import GradCalls
from autoclone.labels import Prefix, graph_nodes
from autoclone.trace_base import (
    _AT,
    _CALL_IMPL,
    _MULTI,
    _OWN_FILES,
    _READERS,
    _STAMP,
    _WRITE,
    READERS,
    Frame,
    Mutation,
    Saved,
    _from_another,
    _grad_fn,
    _Holder,
    _in_optimizer,
    _reaches,
    _running_module,
    _storage,
    _tensors,
    loss_term,
    source_of,
)

#: Backward calls whose frames are kept to name the one that freed a graph (a long run's
#: first calls are the ones a carried graph's first pass meets)
CALLS_NOTED = 4096
#: Graph nodes walked from a carried value to tell whether it reaches a trained parameter
TRAINS_BUDGET = 20000

#: The errors autograd raises at the write itself (the view and leaf families): the others
#: (a version error, a second backward) are raised in backward and diagnosed there.
_EAGER_VIEW_ERROR = re.compile(
    r"is a view and is being modified inplace|A view was created in no_grad mode"
    r"|leaf Variable that requires grad is being used in an in-place operation"
)


def _made_on(root: Any, budget: int = 4000) -> set[tuple[Frame, ...]]:
    """The user stacks that made the nodes of a graph (as stamped)."""
    lines: set[tuple[Frame, ...]] = set()
    queue, seen = [root] if root is not None else [], set[int]()
    while queue and len(seen) < budget:
        node = queue.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stamp = node.metadata.get(_STAMP)
        if stamp and stamp[1]:
            lines.add(tuple(tuple(f) for f in stamp[1]))
        queue += [child for child, _ in node.next_functions if child is not None]
    return lines


class Tracer:
    """Records saves and mutations; ``diagnosis`` holds the conflict once found."""

    def __init__(self, prefix: Prefix) -> None:
        self.prefix = prefix
        self.epoch = 0
        self.saved: dict[int, Saved] = {}
        self.live: dict[int, int] = {}  # storage -> live saved tensors in it
        self.mutations: list[Mutation] = []
        self.views: dict[int, tuple[Any, list[Frame], str, str]] = {}
        self.modules: dict[int, list[Frame]] = {}
        #: Every module built, weakly: where a graph is carried in a module's attribute
        #: (``self.rms = m * self.rms + ...`` in ``forward``), which one, and how the loop
        #: reaches it (``stale_module_state``)
        #: by id: a module's own ``__hash__`` may read attributes its ``__init__`` sets
        #: after ``nn.Module.__init__`` returns (torchmetrics' ``Metric``, which Lightning's
        #: ``self.log`` builds)
        self.all_modules: weakref.WeakValueDictionary[int, torch.nn.Module] = (
            weakref.WeakValueDictionary()
        )
        self.diagnosis: dict[str, Any] | None = None
        self.backward_frames: list[Frame] = []  # where the last backward call was made
        #: The root nodes of the last backward call that ran, and of the one running
        self.last_roots: list[Any] = []
        self.roots: list[Any] = []
        self.backward_loss_frames: list[Frame] = []  # ... and where its loss was made
        self.steps = 0  # optimizer steps so far
        #: Every optimizer built, weakly: whether a carried graph reaches what one of
        #: them trains (``_trains``)
        self.optimizers: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self.steps_at_backward = 0  # ... when the last backward call succeeded
        #: Optimizer steps running: a backward call made now is a step's closure's (L-BFGS
        #: calls it again after moving the parameters)
        self.in_step = 0
        self.holders: dict[int, torch.Tensor] = {}  # record key -> its holder's tensor
        self.warnings: list[dict[str, Any]] = []  # writes PyTorch cannot see
        self._next_key = itertools.count().__next__
        self._op = ""
        self._new: list[int] | None = None  # records saved by the running call
        self._cached: list[Frame] | None = None
        self._at: tuple[Any, int] | None = None  # the innermost user frame's instruction
        self._cut_memo: list[Frame] | None = None
        #: the optimizers stepped since the last backward call started, and those stepped
        #: before this one (between it and the one before)
        self.stepping: list[Any] = []
        self.stepped: list[Any] = []
        self._lines: dict[tuple[int, int], tuple[str, int, Any]] = {}
        self.broken = ""  # the tracer's own failure, if any: the run goes on untraced
        self._suspended = False  # the mode is off for an optimizer step
        self._resume: Any = lambda: None
        #: Keep a copy of a saved tensor before a write into its storage and give the copy
        #: back at unpack (what ``allow_mutation_on_saved_tensors`` does): the run goes
        #: on past the first conflict, which ``conflict`` records, computing the numbers
        #: of the program as written (the reference) in the same run.
        self.copy_on_write = False
        #: Past the first conflict, the backward call (0-based) where a conflict of the other
        #: kind (an optimizer's write against an in-place op's) was met: the mutation-allowed
        #: numbers from there on are no program's the first conflict's edit leads to
        self.other_conflict = -1
        self.copies: dict[int, torch.Tensor] = {}  # record key -> the value it saved
        self.conflict: dict[str, Any] | None = None
        #: Set by the backward counter around a ``backward`` call: only there is a run past
        #: the conflict accounted for (``torch.autograd.grad`` fails as it would).
        self.in_backward = False
        #: Where the loss of the backward call under way was made (its node's mark): the
        #: user's line when a framework calls ``backward`` for them (Lightning, a trainer)
        self.loss_frames: list[Frame] = []
        #: The last iteration (backward calls so far) in which each line made a graph node
        self.made_at: dict[Frame, int] = {}
        #: The graph node of the last weight a log-probability was multiplied by with its
        #: graph (``score_weights``): where a version error's estimate can be cut
        self.weight: Any = None
        #: ``torch.autograd.grad`` calls that freed their graph, and what their derivatives
        #: made (``grad_called``)
        self.grads = GradCalls()
        #: losses that took a target requiring grad, with the stacks only the target's graph
        #: was made on (``note_target``)
        self.targets: list[dict[str, Any]] = []
        #: The graph nodes of the last targets with a graph that losses took
        self.target_nodes: list[Any] = []
        #: The user's frames of each backward call that frees its graph, by epoch
        self.call_frames: dict[int, list[Frame]] = {}

    # -- frames --------------------------------------------------------------------------
    def frames(self, limit: int = 5) -> list[Frame]:
        """Innermost frames in the user's own files."""
        if self._cached is not None:
            return self._cached
        out: list[Frame] = []
        prefix, lines = self.prefix, self._lines
        frame: Any = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            filename = code.co_filename
            if filename.startswith(prefix) and filename not in _OWN_FILES:
                key = (id(code), frame.f_lasti)  # the memo holds ``code``: its id stays unique
                entry = lines.get(key)
                if entry is None:
                    if len(lines) > 100_000:
                        lines.clear()
                    entry = lines[key] = (filename, frame.f_lineno, code)
                if not out:
                    self._at = (code, frame.f_lasti)
                out.append((entry[0], entry[1]))
                if len(out) >= limit:
                    break
            frame = frame.f_back
        if self._op:
            self._cached = out
        return out

    # -- saved-tensor hooks --------------------------------------------------------------
    def pack(self, t: torch.Tensor) -> _Holder:
        if self._suspended:
            self._resume()
        key = self._next_key()
        storage = _storage(t)
        producer = _grad_fn(t)
        self.saved[key] = Saved(
            t._version,
            storage,
            list(t.shape),
            self._op,
            self._cached if self._cached is not None else self.frames(),
            self.epoch,
            "",
            type(producer).__name__ if producer is not None else "",
        )
        live = self.live
        live[storage] = live.get(storage, 0) + 1
        if self._new is None:
            self._new = [key]
        else:
            self._new.append(key)
        detached = t.detach()
        self.holders[key] = detached  # released with the holder: it keeps nothing longer
        return _Holder((detached, key, storage, self))

    def _release(self, key: int, storage: int) -> None:
        self.saved.pop(key, None)
        self.holders.pop(key, None)
        if self.copies:
            self.copies.pop(key, None)
        count = self.live.get(storage, 0) - 1
        if count > 0:
            self.live[storage] = count
        else:
            self.live.pop(storage, None)

    def unpack(self, holder: _Holder) -> torch.Tensor:
        t = holder[0]
        record = self.saved.get(holder[1])
        copy = self.copies.get(holder[1]) if self.copies else None
        if record is not None and t._version != record.version:
            self._diagnose_stale(record, t)
            message = (
                "one of the variables needed for gradient computation has been modified "
                f"by an inplace operation: [{t.type()} {list(t.shape)}], which is output "
                f"0 of {record.producer or record.grad_fn or record.op}, is at version "
                f"{t._version}; expected "
                f"version {record.version} instead. (autograd check made by autoclone)"
            )
            if copy is None or not (self.in_backward or self.conflict):
                raise RuntimeError(message)
            if self.conflict is None:
                self.conflict = {"message": message, "diagnosis": self.diagnosis}
            elif self.other_conflict < 0 and _by_optimizer(self.diagnosis) != _by_optimizer(
                self.conflict["diagnosis"]
            ):
                self.other_conflict = self.epoch  # a conflict of another kind, from this call
        return t if copy is None else copy

    def _copy_saved(self, storages: set[int]) -> None:
        """Before a write into these storages: the values saved there, as saved."""
        copies, holders = self.copies, self.holders
        for key, record in list(self.saved.items()):
            if record.storage in storages and key not in copies:
                alive = holders.get(key)
                if alive is not None and alive._version == record.version:
                    copies[key] = alive.clone()

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
            "loss_frames": self.loss_frames,
            **self._target_of(record.frames),
        }
        if self.weight is not None and self.in_backward:
            self.diagnosis["estimate_cut_frames"] = self._cuts()

    def _cuts(self) -> list[Frame]:
        """``estimate.cuts`` of this backward call, walked once (``backward_started``
        forgets it): every stale record the call unpacks rebuilds the diagnosis (GAIL's
        runs about fifty)."""
        if self._cut_memo is None:
            self._cut_memo = estimate.cuts(self.weight, self.roots, self.target_nodes)
        return self._cut_memo

    def _target_of(self, saved: Any) -> dict[str, Any]:
        """The frames of a loss whose target's graph alone was made where the tensor was
        saved (the whole stack: a ``forward`` line the target net and the policy net
        share is told apart by where each was called)."""
        stack = tuple(tuple(f) for f in saved or ())
        found = next((t for t in self.targets if stack in t["only"]), None)
        if found is None:
            return {}
        return {"target_of_frames": found["loss_frames"], "target_loss": found["loss"],
                # every loss whose target carried a graph its input did not (a content
                # and a style loss): the reference makes them all constant
                "targets": [{"loss_frames": t["loss_frames"], "loss": t["loss"]}
                            for t in self.targets]}  # fmt: skip

    def note_target(self, input: Any, target: Any, loss: str) -> None:  # noqa: A002
        """A loss took a target that requires grad: note the lines whose graph reaches the
        loss only through its target (labels guessed by averaging predictions in place).
        A conflict saved on such a line needs no out-of-place rewrite but a constant."""
        self.target_nodes = [*self.target_nodes[-7:], _grad_fn(target)]
        if len(self.targets) >= 8:
            return
        self._cached = None  # the loss's own line, not the last torch call's
        frames = self.frames()
        if any(t["loss_frames"][:1] == frames[:1] for t in self.targets):
            return  # noted at an earlier step: no walk of both graphs at every step
        only = _made_on(_grad_fn(target)) - _made_on(_grad_fn(input))
        if only:
            self.targets.append({"loss_frames": frames, "only": only, "loss": loss})

    def note_weight(self, weight: Any) -> None:
        """A policy gradient's weight carries a graph (``score_weights``): keep its node,
        whose lines ``estimate.cuts`` splits if a backward call then fails."""
        self.weight = _grad_fn(weight)

    # -- the op watcher ------------------------------------------------------------------
    def call(self, func: Any, name: str, kind: int, args: Any, kwargs: Any) -> Any:
        """One torch call that is not an attribute read (``_Watch`` filters those)."""
        self._cached = None  # one walk of the stack per call, shared by its hooks
        watched = None
        if self.live and (kind & _WRITE or (kwargs and ("inplace" in kwargs or "out" in kwargs))):
            live = self.live
            watched = [(t, t._version) for t in _tensors(args, kwargs) if _storage(t) in live]
            if watched and self.copy_on_write:
                self._copy_saved({_storage(t) for t, _ in watched})
        outer_op, outer_new = self._op, self._new
        self._op = name
        self._new = None
        try:
            out = func(*args, **kwargs) if kwargs else func(*args)
        except RuntimeError as exc:
            if _EAGER_VIEW_ERROR.search(str(exc)):  # refused at the write, not in backward
                if name == "backward":  # the write ran inside it: a checkpoint's recompute
                    self._diagnose_recompute_write(exc)
                else:
                    self._diagnose_view_error(args)
            raise
        finally:
            created = self._new
            self._op = outer_op
            self._new = outer_new
        try:
            if isinstance(out, torch.Tensor):
                try:
                    grad_fn = out.grad_fn
                except RuntimeError:
                    grad_fn = None
                if grad_fn is not None:
                    metadata: Any = grad_fn.metadata
                    if _STAMP not in metadata:
                        self._mark(grad_fn, metadata)
                    if created:
                        node, saved = type(grad_fn).__name__, self.saved
                        for key in created:
                            record = saved.get(key)
                            if record is not None:
                                record.grad_fn = node
                if watched:
                    self._check_writes(name, watched)
                if not torch.is_grad_enabled() and out._is_view():
                    base = out._base
                    if base is not None and base.requires_grad:
                        self._remember_views([out], name, "no_grad_view")
            else:
                if isinstance(out, tuple | list):
                    self._stamp(out)
                if watched:
                    self._check_writes(name, watched)
                if kind & _MULTI and isinstance(out, tuple | list):
                    self._remember_views(out, name, "multi_output_view")
            if self.grads.derived:
                self.grads.derived.spread(name, args, kwargs, out)
        except Exception as exc:  # noqa: BLE001 - the tracer must never break the script
            self.broken = self.broken or f"{type(exc).__name__}: {exc}"
        self._cached = None
        return out

    def _check_writes(self, name: str, watched: list[Any]) -> None:
        for t, version in watched:
            if t._version != version:
                self._record_mutation(t, version, name)
                if self._unseen_by_autograd(_storage(t)):
                    self._warn("data_write", name, _storage(t))
        if name.startswith("_fused_"):  # fused optimizers write without bumping versions
            for t in {_storage(t): t for t, _ in watched}.values():
                self._warn("fused_optimizer", name, _storage(t))

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
            alive = self.holders.get(key)
            if record.storage == storage and alive is not None:
                return bool(alive._version == record.version)
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
                self._mark(grad_fn, grad_fn.metadata)

    def _mark(self, grad_fn: Any, metadata: Any) -> None:
        """Stamp a new node, and note it as a reader of the stamped nodes it consumes (the
        first few): which line took a value in before a backward call freed its graph."""
        stamp = metadata[_STAMP] = (self.epoch, self.frames())
        if stamp[1]:  # what ``source_of`` reads back for a carry's consumer
            metadata[_AT] = self._at
        if stamp[1]:
            self.made_at[stamp[1][0]] = self.epoch
        for child, _ in grad_fn.next_functions:
            if child is None:
                continue
            meta = child.metadata
            if _STAMP in meta:
                readers = meta.setdefault(_READERS, [])
                if len(readers) < READERS and stamp not in readers:
                    readers.append(stamp)

    def carry(self, roots: list[Any]) -> dict[str, Any] | None:
        """The edge where this backward call reaches into an earlier iteration's graph:
        a node made now consuming a value made before the last backward call. Of several,
        the first met that reaches back to the pass whose graph an earlier call freed (as
        marked when this call started): an advantage made before the actor's backward
        call and read by the critic's is met first, but the freed graph is the previous
        rollout's, reached through the critic's carried state; a loss total's chain and
        the loss it adds lead back to the same pass, and the chain, met first, is the carry.
        An edge into a region nothing freed, read by another node than the freed one, is
        passed over: Meta Pseudo Labels' teacher loss on labelled data, made in the pass
        whose unlabelled logits the student's call freed."""
        met = []
        for edge in freed.stale_edges([_grad_fn(t) for t in roots if _grad_fn(t) is not None]):
            met.append(edge)
            if freed.freed(edge[2], self.epoch):
                pass_freed = edge[3][0]
                found = self._edge(*next(e for e in met if e[3][0] <= pass_freed and (
                    e[0] is edge[0] or freed.freed(e[2], self.epoch) is not False)))
                by = freed.freed_by(edge[2])
                if by is not None and by in self.call_frames:
                    found["freed_by_frames"] = self.call_frames[by]
                return found
        return self._edge(*met[0]) if met else None

    def _edge(self, node: Any, stamp: Any, child: Any, old: Any, owner: Any) -> dict[str, Any]:
        readers = child.metadata.get(_READERS, [])
        return {"consumer_frames": stamp[1], "producer_frames": old[1],
                "consumer_epoch": stamp[0], "producer_epoch": old[0],
                "readers": [{"epoch": e, "frames": f} for e, f in readers],
                "all_readers": len(readers) < READERS,
                # the line that made the old value made one again this pass:
                # the pass remakes what it reads from the last (a carry)
                "made_again": bool(old[1]) and self.made_at.get(old[1][0]) == stamp[0],
                "trains": self._trains(child),
                # an optimizer stepped after the first loss trains what made the shared
                # value: that loss was its own (VQGAN's autoencoder step, then the
                # discriminator's), so the later loss is the one to keep out of the graph
                "stepped_trains": bool(self.stepped) and self._trains(child, self.stepped),
                # the expression that read the older value, of the line's several
                "read": source_of(owner.metadata.get(_AT)),
                "loss_term": loss_term(child, self.last_roots),
                "node": type(node).__name__}  # fmt: skip

    def _trains(self, node: Any, optimizers: list[Any] | None = None) -> bool | None:
        """Whether the carried graph reaches a parameter an optimizer holds (None: no
        optimizer was built, or too large a graph to walk). A value made once
        from frozen weights (activations harvested from a model nobody trains) is data; one
        made from trained parameters (a constructor's cached ``exp(log_scale)``) must be
        recomputed, not detached. ``optimizers``: only those, not every one built."""
        chosen = list(self.optimizers.values()) if optimizers is None else optimizers
        held = {id(p) for opt in chosen for group in opt.param_groups
                for p in group["params"]}  # fmt: skip
        if not held:
            return None
        for count, here in enumerate(graph_nodes(node)):
            if count >= TRAINS_BUDGET:
                return None
            variable = getattr(here, "variable", None)
            if variable is not None and id(variable) in held:
                return True
        return False

    def backward_started(self, roots: list[Any], frees: bool = True) -> None:
        """Note where the loss was made: the first node of its graph made on another line
        than the one calling backward now (a framework's own ``loss / n`` is made on the
        user's ``trainer.fit(...)`` line, as far as the user's frames tell); and, for a
        call that keeps no graph, that it frees what it runs."""
        self.in_backward = True
        self._cut_memo = None
        self.stepped, self.stepping = self.stepping, []
        self.last_roots, self.roots = self.roots, [_grad_fn(t) for t in roots]
        here = self.frames()[:1]
        if frees and len(self.call_frames) < CALLS_NOTED:
            self.call_frames[self.epoch] = self.frames()
        queue = [node for node in self.roots if node is not None]
        freed.mark(queue, self.epoch, frees)  # before this call frees what it runs
        self._note_loss_frames(here)

    def _note_loss_frames(self, here: list[Frame]) -> None:
        """Where the loss was made: the first node of its graph made off the line ``here``."""
        queue = [node for node in self.roots if node is not None]
        seen = 0
        while queue and seen < 64:
            node, seen = queue.pop(0), seen + 1
            stamp = node.metadata.get(_STAMP)
            if stamp and stamp[1][:1] != here:
                self.loss_frames = stamp[1]
                return
            queue += [child for child, _ in node.next_functions if child is not None]
        self.loss_frames = []

    def backward_failed(self, roots: list[Any], message: str) -> None:
        """Called when a backward call raised: add the carry edge, if there is one."""
        if "does not require grad and does not have a grad_fn" in message:
            made = self.grads.constant_in(self.epoch, roots)
            if made is not None:
                self.diagnosis = {"kind": "no_graph", "epoch": self.epoch,
                                  "grad_frames": made, "derivative_in_loss": True}
        if "backward through the graph a second time" in message:
            self.diagnosis = {"kind": "backward_twice", "epoch": self.epoch,
                              "loss_frames": self.loss_frames,
                              "previous_backward_frames": self.backward_frames,
                              "previous_loss_frames": self.backward_loss_frames,
                              "stepped": self.steps > self.steps_at_backward,
                              "in_step": self.in_step > 0}  # fmt: skip
            freed_by = self.grads.freeing(self.epoch, self.roots)  # since the last backward
            if freed_by is not None:
                self.diagnosis["grad_frames"] = freed_by
            if _reaches(self.roots, self.last_roots):
                self.diagnosis["recounts_previous"] = True
            derived = self.grads.derived  # a derivative used as a weight is a constant
            if any(derived.holds(t) for t in roots) and not derived.weights:
                self.diagnosis["derivative_in_loss"] = True
        self._add_carry(roots, self.diagnosis)
        carry = (self.diagnosis or {}).get("carry")
        if carry and self.diagnosis and self.diagnosis.get("kind") == "backward_twice":
            # a graph kept from an earlier pass that only a loss's target reads (a teacher's
            # logits cached once with grad on): the target is the constant to make
            self.diagnosis.update(self._target_of(carry["producer_frames"]))

    def grad_failed(self, outputs: Any, message: str) -> None:
        """A ``torch.autograd.grad`` call raised: diagnosed as a backward call that raised,
        its roots the outputs differentiated (VQGAN's adaptive weight takes two derivatives
        through one decoder, and the first call freed what the second runs through)."""
        roots = list(_tensors((outputs,), None))
        self.last_roots, self.roots = self.roots, [_grad_fn(t) for t in roots]
        self._note_loss_frames(self.frames()[:1])
        self.backward_failed(roots, message)

    def grad_called(self, kwargs: dict[str, Any], result: Any = (), outputs: Any = ()) -> None:
        """``torch.autograd.grad`` ran (``derivatives.GradCalls``)."""
        if not (kwargs.get("retain_graph") or kwargs.get("create_graph")):
            self._cached = None
        self.grads.called(kwargs, result, outputs, self.epoch, self.frames)

    def conflict_passed(self, roots: list[Any]) -> None:
        """Called when a backward call went past the first conflict (copy-on-write): its
        diagnosis gets the carry edge, as a failed call's does."""
        if self.conflict is not None:
            self._add_carry(roots, self.conflict["diagnosis"])

    def _add_carry(self, roots: list[Any], diagnosis: dict[str, Any] | None) -> None:
        edge = self.carry(roots)
        if edge is not None and diagnosis is not None:
            diagnosis["carry"] = edge
            state = stale_module_state(self.all_modules.values(), self.epoch, self.prefix)
            if state is not None:
                diagnosis["module_state"] = state

    def _record_mutation(self, t: torch.Tensor, version: int, op: str) -> None:
        module = _running_module()
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
                _in_optimizer(self.prefix),
            )
        )
        del self.mutations[:-256]  # only recent writes can explain the next stale read

    def _diagnose_recompute_write(self, exc: BaseException) -> None:
        """A leaf written inside a backward call: ``torch.utils.checkpoint`` ran a block
        again on a detached copy of its input (a leaf), and the block writes it in place
        (``x += pos_bias``, legal without checkpointing). The op watcher does not run there,
        so the write's frames and module come from the traceback."""
        frames: list[Frame] = []
        module: Any = None
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code is _CALL_IMPL:
                module = frame.f_locals.get("self")
            name = frame.f_code.co_filename
            if name.startswith(self.prefix) and name not in _OWN_FILES:
                frames.insert(0, (name, tb.tb_lineno))
            tb = tb.tb_next
        built = self.modules.get(id(module), []) if module is not None else []
        mutation = {"frames": frames[:5], "epoch": self.epoch, "module_frames": built}
        self.diagnosis = {"kind": "view_write", "mutation": mutation, "recomputed": True}

    def _diagnose_view_error(self, args: Any) -> None:
        """A write autograd refused eagerly: where, by which library module if one wrote
        (``nn.ReLU(inplace=True)`` after a hooked layer), and the view's origin if known."""
        module = _running_module()
        tensors = list(_tensors(args, {}))
        mutation = {
            "frames": self.frames(),
            "epoch": self.epoch,
            "module_frames": self.modules.get(id(module), []) if module else [],
            # the value written comes from another tensor that requires grad (a tied
            # weight copied from its source, a shared prompt added): a reparametrization,
            # where a clamp of the tensor by constants is a projection
            "from_grad": bool(tensors) and any(_from_another(tensors[0], t) for t in tensors[1:]),
        }
        for t in tensors:
            entry = self.views.get(id(t))
            if entry is not None and entry[0]() is t:
                base = t._base
                leaf = base is not None and base.is_leaf and base.requires_grad
                self.diagnosis = {
                    "kind": entry[3],
                    "view": {"frames": entry[1], "op": entry[2], "leaf_base": leaf},
                    "mutation": mutation,
                }
                return
        self.diagnosis = {"kind": "view_write", "mutation": mutation}


def _by_optimizer(diagnosis: dict[str, Any] | None) -> bool:
    """The conflict's write was an optimizer's step (the other kind is an in-place op's)."""
    mutation = (diagnosis or {}).get("mutation") or {}
    return bool(mutation.get("optimizer"))
