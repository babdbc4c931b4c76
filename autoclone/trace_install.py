"""Put the tracer's probes in place for the rest of a trial process: the saved-tensor
hooks, the ``TorchFunctionMode`` that hands torch calls to ``Tracer.call``, the records of
where modules and optimizers were built, and optimizer steps run without the mode while
nothing saved is alive. What the probes record and conclude is ``autoclone.tracer``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from autoclone.labels import Prefix
from autoclone.trace_base import _READ, _kind
from autoclone.tracer import Tracer

#: Told of a torch call that raised: ``(True, value)`` to return ``value`` instead
#: (``autoclone.child_fork``), ``(False, None)`` to raise.
Refused = Callable[["_Watch", BaseException, Any, Any, Any], tuple[bool, Any]]


class _Watch(TorchFunctionMode):
    """Hands every torch call but an attribute read to ``Tracer.call``; what each function
    can do is decided once, from its name (``_kind``)."""

    def __init__(self, tracer: Tracer, refused: Refused | None = None) -> None:
        super().__init__()
        self.call = tracer.call
        self.kinds: dict[Any, tuple[str, int]] = {}
        self.refused = refused

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        try:
            name, kind = self.kinds[func]
        except KeyError:
            name, kind = _kind(func)
            if len(self.kinds) < 10_000:
                self.kinds[func] = name, kind
        except TypeError:  # an unhashable callable
            name, kind = _kind(func)
        if kind == _READ:
            return func(*args, **kwargs) if kwargs else func(*args)
        try:
            return self.call(func, name, kind, args, kwargs)
        except RuntimeError as exc:
            if self.refused is None:
                raise
            done, value = self.refused(self, exc, func, args, kwargs)
            if not done:
                raise
            return value


def plain_call(func: Any, _name: str, _kind: int, args: Any, kwargs: Any) -> Any:
    """What ``_Watch`` calls in place of the tracer where nothing is to be recorded."""
    return func(*args, **kwargs) if kwargs else func(*args)


def _track_modules(tracer: Tracer) -> None:
    """Where each library module was built, for ``inplace=True`` (the running module is
    read from the stack when a write is recorded: see ``_running_module``)."""
    original_init = torch.nn.Module.__init__

    def init(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        with contextlib.suppress(TypeError):  # a module that cannot be weakly referenced
            tracer.all_modules[id(self)] = self
        if type(self).__module__.startswith("torch."):
            tracer.modules.setdefault(id(self), tracer.frames(limit=1))

    torch.nn.Module.__init__ = init  # type: ignore[method-assign]


def _track_optimizers(tracer: Tracer) -> None:
    """Every optimizer the script builds, weakly: a carried graph reaching what one of
    them holds trains (``Tracer._trains``), whether or not it has stepped yet (a GAN's
    generator optimizer, after the discriminator's step)."""
    original_init = torch.optim.Optimizer.__init__

    def init(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        with contextlib.suppress(TypeError):
            tracer.optimizers[id(self)] = self

    torch.optim.Optimizer.__init__ = init  # type: ignore[method-assign]


def _quiet_optimizer_steps(tracer: Tracer, watch: _Watch) -> None:
    """Run ``torch.optim`` steps without the mode while no saved tensor is alive.

    Such a step (no closure, not ``differentiable``: it runs under ``no_grad``) makes no
    graph node and saves nothing, and with nothing saved none of its writes can be
    recorded: the mode would only add its cost to every one of its many small calls. A
    step that raises leaves the mode off; the next saved tensor turns it back on."""
    try:
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        depth, top = torch._C._len_torch_function_stack, torch._C._get_function_stack_at
        pop, push = torch._C._pop_torch_function_stack, torch._C._push_on_torch_function_stack
    except (ImportError, AttributeError):
        return

    def resume() -> None:
        if tracer._suspended:
            tracer._suspended = False
            push(watch)

    def before(optimizer: Any, args: Any, kwargs: Any) -> None:
        tracer.steps += 1
        tracer.stepping = [*tracer.stepping[-7:], optimizer]
        tracer.in_step += 1
        if (
            tracer.live
            or tracer._suspended
            or len(args) > 1  # a closure: forward and backward inside the step
            or kwargs
            or not type(optimizer).__module__.startswith("torch.optim.")
            or optimizer.defaults.get("differentiable")
        ):
            return
        n = depth()
        if n and top(n - 1) is watch:  # never reorder modes the script pushed itself
            pop()
            tracer._suspended = True

    def after(_optimizer: Any, _args: Any, _kwargs: Any) -> None:
        tracer.in_step = max(tracer.in_step - 1, 0)
        resume()

    tracer._resume = resume
    register_optimizer_step_pre_hook(before)
    register_optimizer_step_post_hook(after)


def install(prefix: Prefix, refused: Refused | None = None) -> Tracer:
    """Start tracing for the rest of the process; returns the tracer to read at the end.
    ``refused``: told of each torch call that raised (``_Watch``)."""
    tracer = Tracer(prefix)
    _track_modules(tracer)
    _track_optimizers(tracer)
    hooks = torch.autograd.graph.saved_tensors_hooks(tracer.pack, tracer.unpack)
    hooks.__enter__()
    watch = _Watch(tracer, refused)
    watch.__enter__()
    _quiet_optimizer_steps(tracer, watch)
    return tracer
