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
            name = getattr(func, "__name__", "")
            target = args[0] if args else None
            writes = name.endswith("_") or name.startswith("__i") or name == "__setitem__"
            if writes and isinstance(target, torch.Tensor) and torch.is_grad_enabled():
                base = target._base if target._base is not None else target
                if base.is_leaf and base.requires_grad:
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
