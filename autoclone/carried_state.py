"""Name a graph carried across steps in a module's attribute, as the user's loop reaches it.

A running statistic updated from itself in ``forward`` (``self.rms = m * self.rms + ...``)
keeps the graph of every earlier step alive in a plain attribute. The tracer finds where a
backward call reaches into an earlier step's graph (``Tracer.carry``); this reads the
modules to say which attribute holds it, so the loop can cut it after its backward call.
Runs inside the trial process, like the tracer: standard library and torch only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch

from autoclone.labels import Prefix
from autoclone.trace_base import _STAMP, _grad_fn, _user_frame


def stale_module_state(
    modules: Iterable[torch.nn.Module], epoch: int, prefix: Prefix
) -> dict[str, Any] | None:
    """A tensor kept as a plain attribute of a module (not a parameter, not a buffer) whose
    graph was built before the last backward call: a running statistic updated from
    itself in ``forward`` and carried from step to step. Named as the frame that called
    backward reaches it (``self.model.norm.rms``, ``model[1].avg``), so the loop can cut
    it after its backward call; ``all`` names each one (the same attribute of several
    layers); None if no local of that frame leads to one."""
    held = []
    for module in list(modules):
        for name, value in vars(module).items():
            stamp = _older(value, epoch) if name.isidentifier() else None
            if stamp is not None:
                held.append((module, name, stamp))
    if not held:
        return None
    frame = _user_frame(prefix)
    if frame is None:
        return None
    reached = [(f"{path}.{name}", stamp) for module, name, stamp in held
               if (path := _reach(frame.f_locals, module))]  # fmt: skip
    if not reached:
        return None
    return {"expr": reached[0][0], "frames": reached[0][1][1],
            "backward_frames": [(frame.f_code.co_filename, frame.f_lineno)],
            # every such attribute (a cache in each layer of a model), with where its
            # carried graph was made
            "all": [{"expr": expr, "frames": stamp[1]} for expr, stamp in reached]}  # fmt: skip


def _older(value: Any, epoch: int, budget: int = 20_000) -> Any:
    """The stamp of a node built before ``epoch`` that the tensor's graph reaches (the
    graph of a running statistic is a chain back to the first step), or None."""
    root: Any = _grad_fn(value)
    queue: list[Any] = [root] if root is not None else []
    seen: set[int] = set()
    while queue and len(seen) < budget:
        node = queue.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stamp = node.metadata.get(_STAMP)
        if stamp is not None and stamp[0] < epoch:
            return stamp
        queue += [child for child, _ in node.next_functions if child is not None]
    return None


def _reach(local: Mapping[str, Any], target: torch.nn.Module) -> str:
    """An expression over the frame's locals (and ``self``'s attributes, one level) that
    evaluates to ``target``, through submodules: ``model``, ``self.model.norm``, ``model[1]``."""
    starts = [(k, v) for k, v in local.items() if isinstance(v, torch.nn.Module)]
    owner = local.get("self")
    if owner is not None and not isinstance(owner, torch.nn.Module):
        starts += [(f"self.{k}", v) for k, v in vars(owner).items()
                   if isinstance(v, torch.nn.Module) and k.isidentifier()]  # fmt: skip
    for expr, root in starts:
        for qualified, sub in root.named_modules():
            if sub is target:
                parts = [f"[{p}]" if p.isdigit() else f".{p}" for p in qualified.split(".") if p]
                return expr + "".join(parts)
    return ""
