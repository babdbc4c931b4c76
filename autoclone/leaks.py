"""Gradient leaks between optimizers, watched in the trial child during the run in which no
backward call frees its graph (the reference for ``retain_graph=True``).

Two losses share a subgraph (a GAN's ``fake = G(z)`` feeds ``d_loss`` and ``g_loss``).
``retain_graph=True`` on the first backward call removes the crash, but that call also
deposits gradients into the generator, and when ``opt_G.zero_grad()`` ran before it,
``opt_G.step()`` then steps on the gradients of both losses: a silent wrong fix. This
module records, per backward call, the optimizers whose parameters it reached, and every
``zero_grad`` and ``step``; a leak is a backward call whose gradients reach an optimizer
other than the first one to step after it, which then steps with no ``zero_grad`` between.
Nothing here prints: the findings go into the result file.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from autoclone.labels import Prefix


@dataclass
class Watcher:
    """Events in order: ("backward", params, frames), ("zero", params), ("step", opt, frames)."""

    prefix: Prefix
    optimizers: list[Any] = field(default_factory=list)
    events: list[tuple[Any, ...]] = field(default_factory=list)

    def frames(self) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        frame: Any = sys._getframe(1)
        while frame is not None and len(out) < 3:
            if frame.f_code.co_filename.startswith(self.prefix):
                out.append((frame.f_code.co_filename, frame.f_lineno))
            frame = frame.f_back
        return out

    def backward(self, leaves: list[Any]) -> None:
        reached = {id(leaf) for leaf in leaves}
        self.events.append(("backward", reached, self.frames()))

    def leaks(self) -> list[dict[str, Any]]:
        """Each leak once: the backward call that leaked and the step that used it."""
        found: dict[tuple[Any, ...], dict[str, Any]] = {}
        for index, event in enumerate(self.events):
            if event[0] != "backward":
                continue
            for leak in _leaks_from(self.events, index, self.optimizers):
                key = (tuple(map(tuple, leak["backward_frames"])),
                       tuple(map(tuple, leak["step_frames"])))  # fmt: skip
                found.setdefault(key, leak)
        return list(found.values())[:8]


def _params(optimizer: Any) -> set[int]:
    return {id(p) for group in optimizer.param_groups for p in group["params"]}


def _leaks_from(events: list[tuple[Any, ...]], index: int, optimizers: list[Any]) -> list[dict]:
    """Follow one backward call's gradients until each optimizer it reached zeroes them
    or steps on them. The first optimizer to step after the call owns it."""
    _, reached, frames = events[index]
    pending = {i: _params(o) & reached for i, o in enumerate(optimizers)}
    pending = {i: p for i, p in pending.items() if p}
    owner, out = None, []
    for event in events[index + 1 :]:
        if event[0] == "zero":
            pending = {i: p - event[1] for i, p in pending.items() if p - event[1]}
        elif event[0] == "step":
            opt = event[1]
            if owner is None:
                owner = opt
            elif opt in pending and opt != owner:
                out.append({"kind": "gradient_leak", "backward_frames": frames,
                            "step_frames": event[2], "owner": owner, "optimizer": opt})  # fmt: skip
            pending.pop(opt, None)
        if not pending:
            break
    return out


def install(prefix: Prefix) -> Watcher:
    """Record optimizers as they are built, and their ``zero_grad`` and ``step`` calls;
    ``Module.zero_grad`` counts too (``G.zero_grad()`` clears what ``opt_G`` would step)."""
    import torch
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    watcher = Watcher(prefix)
    opt_init = torch.optim.Optimizer.__init__
    opt_zero = torch.optim.Optimizer.zero_grad
    module_zero = torch.nn.Module.zero_grad

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        opt_init(self, *args, **kwargs)
        watcher.optimizers.append(self)

    def zero_grad(self: Any, *args: Any, **kwargs: Any) -> Any:
        watcher.events.append(("zero", _params(self)))
        return opt_zero(self, *args, **kwargs)

    def module_zero_grad(self: Any, *args: Any, **kwargs: Any) -> Any:
        watcher.events.append(("zero", {id(p) for p in self.parameters()}))
        return module_zero(self, *args, **kwargs)

    def before_step(optimizer: Any, _args: Any, _kwargs: Any) -> None:
        if optimizer in watcher.optimizers:
            watcher.events.append(("step", watcher.optimizers.index(optimizer), watcher.frames()))

    torch.optim.Optimizer.__init__ = init  # type: ignore[method-assign]
    torch.optim.Optimizer.zero_grad = zero_grad  # type: ignore[method-assign]
    torch.nn.Module.zero_grad = module_zero_grad  # type: ignore[method-assign]
    register_optimizer_step_pre_hook(before_step)
    return watcher
