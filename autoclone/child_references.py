"""What the reference modes change in torch, inside a trial.

Split out of ``autoclone.child`` (which runs inside the user's process) to keep that
module short: the patches that make a run compute what the user meant rather than
what the program does (``REFERENCE``, ``RETAIN_REFERENCE``, ``LEAF_DATA``). torch is
imported only when one is installed, so importing this costs nothing in the parent.
"""

from __future__ import annotations

from typing import Any


def retained(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``retain_graph=True`` whether it came by position (as ``Tensor.backward`` passes
    it: ``grad_tensors, retain_graph, ...``) or by keyword."""
    if len(args) >= 2:
        return (args[0], True, *args[2:]), kwargs
    return args, {**kwargs, "retain_graph": True}


def storage_keyed_saved_tensors() -> None:
    """Make clone-on-mutation see writes through views that start inside a buffer.

    torch keys saved tensors by ``(data_ptr, version)``; a write through ``a[t:t+1]``
    has another ``data_ptr``, so the saved ``a`` is not copied and the "reference"
    silently uses modified values. Views share their base's storage and version
    counter, so keying by storage copies every saved view a write can reach.
    """
    from torch.autograd import graph

    original = graph._get_sid

    def storage_sid(tensor: Any) -> tuple[int, int]:
        try:
            return (tensor.untyped_storage().data_ptr(), tensor._version)
        except (RuntimeError, NotImplementedError):  # fake or functional tensors
            return original(tensor)

    graph._get_sid = storage_sid


#: The operators that write their left operand: every other dunder (``__getitem__``,
#: ``__invert__``, ``__get__``) reads, and a read of a leaf must keep its graph
_INPLACE_DUNDERS = frozenset(
    f"__i{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "div", "mod",
                            "pow", "and", "or", "xor", "lshift", "rshift")
) | {"__setitem__"}  # fmt: skip


def writes_in_place(name: str) -> bool:
    """A torch function's name says it writes its first argument (``clamp_``, ``__iadd__``,
    ``__setitem__``)."""
    return name in _INPLACE_DUNDERS or (name.endswith("_") and not name.startswith("__"))


def leaf_writes_as_data() -> Any:
    """A torch function mode under which an in-place call whose target is a leaf that
    requires grad, or a view of one, runs with grad disabled (``LEAF_DATA``)."""
    import torch
    from torch.overrides import TorchFunctionMode

    class LeafWritesAsData(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            target = args[0] if args else None
            writes = writes_in_place(getattr(func, "__name__", ""))
            if writes and isinstance(target, torch.Tensor) and torch.is_grad_enabled():
                # the leaf itself, or the leaf it views; a view of a plain tensor made a
                # leaf by requires_grad_ (an SGLD chain's slice of its buffer) is one too
                if any(t is not None and t.is_leaf and t.requires_grad
                       for t in (target, target._base)):  # fmt: skip
                    with torch.no_grad():
                        return func(*args, **kwargs)
            return func(*args, **kwargs)

    return LeafWritesAsData()


def grad_stays_off() -> None:
    """Grad off for the rest of a forward reference, whatever the script asks: frameworks
    turn it back on around each training step (Lightning's ``@torch.enable_grad()`` and its
    fit loop's ``torch.set_grad_enabled(True)``), which made the failing step's forward
    pass raise its error again instead of computing the reference. Every Python-level way
    to set the mode (``enable_grad``, ``set_grad_enabled``, ``no_grad``) goes through
    ``torch._C._set_grad_enabled``."""
    import torch

    original = torch._C._set_grad_enabled
    if getattr(original, "autoclone_off", False):
        return

    def off(mode: bool) -> None:
        original(False)

    off.autoclone_off = True  # type: ignore[attr-defined]
    torch._C._set_grad_enabled = off  # type: ignore[assignment]
    original(False)


def function_outputs_unaliased() -> None:
    """Once a forward reference has turned grad off for the step that failed, a custom
    ``autograd.Function``'s output that shares memory with one of its inputs
    (``x.view_as(x)``, or the input returned as-is) is returned as a copy. With grad on,
    autograd refuses a write into such an output's base ("This view was created inside a
    custom Function ... You can fix this by cloning the output of the custom Function"):
    the program it supports is the one where the Function gave a tensor of its own, so a
    gradient-reversal layer followed by ``nn.ReLU(inplace=True)`` on its input is judged by
    the values the reversed branch had before the write. Steps before the failing one, and
    no_grad blocks in them, keep the aliasing the script has."""
    import torch

    original = torch.autograd.Function.apply.__func__  # type: ignore[attr-defined]

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(cls, *args, **kwargs)
        if not getattr(torch._C._set_grad_enabled, "autoclone_off", False):
            return out
        inputs = {_memory(a) for a in args} - {None}

        def own(t: Any) -> Any:
            return t.clone() if _memory(t) in inputs else t

        return tuple(own(o) for o in out) if isinstance(out, tuple) else own(out)

    torch.autograd.Function.apply = classmethod(apply)  # type: ignore[assignment, method-assign]


def _memory(value: Any) -> int | None:
    """Where a dense tensor's storage starts; None for anything else (a sparse tensor)."""
    import torch

    if not isinstance(value, torch.Tensor):
        return None
    try:
        return int(value.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):
        return None


def inplace_flags_off() -> None:
    """Every ``torch.nn.functional`` function that takes ``inplace`` runs with it off
    (``INPLACE_OFF``): modules pass their flag to these (``nn.ReLU(inplace=True)`` calls
    ``F.relu(x, inplace=True)``), so the run computes the program with every in-place
    activation and dropout written out of place, as the flag, a memory saving, promises
    it computes. A script whose numbers differ here read a tensor such a write changed
    through another name (an identity shortcut of the activation's input)."""
    import functools
    import inspect

    import torch.nn.functional as F  # noqa: N812

    for name in dir(F):
        original = getattr(F, name)
        if not inspect.isfunction(original):
            continue
        params = list(inspect.signature(original).parameters)
        if "inplace" in params:
            setattr(F, name, _not_inplace(original, params.index("inplace"), functools))


def _not_inplace(original: Any, index: int, functools: Any) -> Any:
    @functools.wraps(original)
    def out_of_place(*args: Any, **kwargs: Any) -> Any:
        if len(args) > index:
            args = (*args[:index], False, *args[index + 1 :])
        elif "inplace" in kwargs:
            kwargs["inplace"] = False
        return original(*args, **kwargs)

    return out_of_place
