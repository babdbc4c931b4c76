"""Run a script written for a GPU on a machine without one: CUDA mapped to the CPU.

A script that calls ``.cuda()`` or ``torch.randn(..., device="cuda")`` unconditionally
dies with "Torch not compiled with CUDA enabled" on a laptop or a CI box, long before it
reaches the autograd bug the user asked about. The trial child (only it: never the user's
files, never the patch) calls :func:`install` when CUDA is not available, and the script
then runs as if every CUDA device in it were the CPU, which is what a person does by hand
when they replace ``"cuda"`` with ``"cpu"``:

* the ``device=`` (and ``pin_memory=``) arguments of torch's constructors (PyTorch's own
  list, the one ``torch.set_default_device`` uses), of ``*_like``, ``normal`` and
  ``Tensor.new_*``, the device given to ``Tensor.to``; ``Tensor.cuda()`` is
  ``Tensor.to("cpu")`` and ``Tensor.pin_memory()`` the tensor itself (``Module.cuda``,
  ``Module.to`` and ``nn.Linear(..., device=...)`` go through these); a CUDA default device
  (``torch.set_default_device("cuda")``, ``with torch.device("cuda"):``) is the CPU;
* ``torch.cuda.synchronize``, ``set_device``, ``current_device`` and the other calls that
  need a CUDA runtime do nothing, ``with torch.cuda.device(i):`` too, and a
  ``torch.cuda.Event`` times CPU work; ``torch.load`` loads onto the CPU;
* ``torch.cuda.is_available()`` stays honest (``False``): code that branches on it takes
  the branch a CPU machine takes, and PyTorch itself then makes ``autocast("cuda")`` a
  no-op (the run computes in float32, not float16) and ``GradScaler("cuda")`` a
  pass-through (``scale`` returns the loss, ``step`` calls ``optimizer.step()``,
  ``update`` does nothing). CPU autocast is not put in its place: bfloat16 would change
  the numbers the oracle compares. Their "CUDA is not available" warnings are silenced.

The functions are wrapped, not watched with a ``TorchFunctionMode``: a mode runs Python
for every torch call of the script (124 per step of a small MLP trained with Adam), a
wrapper only for the calls that can name a device. As on the CPU, ``x.cuda()`` of a CPU
tensor is ``x`` itself where a GPU would copy it, so an in-place write to the moved tensor
also reaches the original. :func:`mapped` counts the calls that were moved to the CPU:
whether the verification really ran a CUDA script on the CPU.

This module imports torch only in :func:`install`: the parent process imports
``autoclone.child`` (and so this module) without paying for torch.
"""

from __future__ import annotations

import functools
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

_count = 0  # calls moved to the CPU since install(): read it with mapped()
_installed = False

#: ``torch.cuda`` calls that need a CUDA runtime, made harmless, with what they return.
_CUDA_CALLS: dict[str, Any] = {
    "synchronize": None,
    "set_device": None,
    "ipc_collect": None,
    "reset_peak_memory_stats": None,
    "reset_max_memory_allocated": None,
    "reset_accumulated_memory_stats": None,
    "current_device": 0,
    "get_device_name": "cpu",
}
#: Constructors outside PyTorch's default-device list that take ``device=``.
_MORE_FACTORIES = (
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "randint_like", "normal",
)  # fmt: skip
_TENSOR_FACTORIES = (
    "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full", "new_tensor",
)  # fmt: skip
#: What PyTorch says when it turns CUDA-only features off on a CPU machine: expected here.
_QUIET = (
    "CUDA is not available or torch_xla is imported. Disabling autocast",
    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available",
    "'pin_memory' argument is set as true but no accelerator is found",
)


def mapped() -> int:
    """How many calls were moved from CUDA to the CPU since :func:`install`."""
    return _count


def install() -> bool:
    """Map CUDA to the CPU in this process if CUDA is unavailable; True if installed.

    ``--device cpu`` hides the GPUs (``CUDA_VISIBLE_DEVICES=""``), so it maps too;
    with a usable GPU nothing changes.
    """
    global _installed
    if _installed:
        return True
    import torch

    if torch.cuda.is_available():
        return False
    for message in _QUIET:
        warnings.filterwarnings("ignore", message=message)
    _wrap_factories(torch)
    _wrap_tensor_methods(torch)
    _wrap_default_device()
    _quiet_cuda_calls(torch)
    torch.load = _load(torch.load)  # type: ignore[assignment]
    _installed = True
    return True


def is_cuda(device: object) -> bool:
    """A CUDA device as torch accepts one: ``"cuda"``, ``"cuda:1"``, a device, an ordinal."""
    if isinstance(device, str):
        return device.startswith("cuda")
    if isinstance(device, int):
        return not isinstance(device, bool)
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(device, torch.device) and device.type == "cuda"


def _to_cpu(device: object) -> object:
    """The CPU for a CUDA device (counted), anything else unchanged."""
    global _count
    if is_cuda(device):
        _count += 1
        return "cpu"
    return device


def _map_kwargs(kwargs: dict[str, Any]) -> None:
    global _count
    if "device" in kwargs:
        kwargs["device"] = _to_cpu(kwargs["device"])
    if kwargs.get("pin_memory"):
        _count += 1
        kwargs["pin_memory"] = False


def _with_device(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` with its ``device=`` and ``pin_memory=`` keywords mapped."""

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            _map_kwargs(kwargs)
        return original(*args, **kwargs)

    return call


def _wrap_factories(torch: Any) -> None:
    """Every public constructor that takes ``device=``, wherever it is exported."""
    from torch.utils import _device

    constructors = _device._device_constructors()  # cached now, with the originals
    for owner in (torch, torch.fft, torch.nested):
        for name, value in list(vars(owner).items()):
            ours = owner is torch and name in _MORE_FACTORIES
            if ours or (callable(value) and not isinstance(value, type) and value in constructors):
                setattr(owner, name, _with_device(value))


def _wrap_tensor_methods(torch: Any) -> None:
    tensor = torch.Tensor
    original_to = tensor.to
    for name in _TENSOR_FACTORIES:
        setattr(tensor, name, _with_device(getattr(tensor, name)))

    @functools.wraps(original_to)
    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            args = (_to_cpu(args[0]), *args[1:])
        if kwargs:
            _map_kwargs(kwargs)
        return original_to(self, *args, **kwargs)

    def cuda(self: Any, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """As ``Tensor.to("cpu")``: the tensor itself, as on a CPU."""
        global _count
        _count += 1
        return original_to(self, "cpu", **kwargs)

    def pin_memory(self: Any, device: Any = None) -> Any:
        """No pinned memory without an accelerator: the tensor itself."""
        global _count
        _count += 1
        return self

    tensor.to, tensor.cuda, tensor.pin_memory = to, cuda, pin_memory


def _wrap_default_device() -> None:
    """``torch.set_default_device("cuda")`` and ``with torch.device("cuda"):`` both build a
    ``DeviceContext`` (the latter from C++): give it the CPU."""
    from torch.utils._device import DeviceContext

    original = DeviceContext.__init__

    def init(self: Any, device: Any) -> None:
        original(self, _to_cpu(device))

    DeviceContext.__init__ = init  # type: ignore[method-assign]


def _quiet_cuda_calls(torch: Any) -> None:
    for name, value in _CUDA_CALLS.items():
        if hasattr(torch.cuda, name):
            setattr(torch.cuda, name, _returning(value))
    torch.cuda.Event, torch.cuda.device = _Event, _Device


class _Event:
    """``torch.cuda.Event`` for timing: CPU work is synchronous, so an event is the moment
    it was recorded, and ``elapsed_time`` the milliseconds between two, as CUDA reports."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        global _count
        _count += 1
        self.at = time.perf_counter()

    def record(self, stream: Any = None) -> None:
        self.at = time.perf_counter()

    def elapsed_time(self, end: _Event) -> float:
        return (end.at - self.at) * 1000.0

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream: Any = None) -> None:
        """Nothing to wait for."""

    def query(self) -> bool:
        return True


class _Device:
    """``with torch.cuda.device(i):``: there is one device, the CPU, already current."""

    def __init__(self, device: Any) -> None:
        global _count
        _count += 1

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _returning(value: Any) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        global _count
        _count += 1
        return value

    return call


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.load`` onto the CPU unless another CPU-side place was asked for."""

    @functools.wraps(original)
    def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        location = "cpu" if map_location is None else _to_cpu(map_location)
        return original(f, location, *args, **kwargs)

    return load
