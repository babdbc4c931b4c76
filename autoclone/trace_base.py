"""What the tracer's modules share: its records, the marks it puts on graph nodes, and
reads of tensors, torch functions and the Python stack that never raise or change anything.

Its own module so that the tracer (``autoclone.tracer``) and the reader of carried module
state (``autoclone.carried_state``) can both use them without importing each other. Like
them it runs inside the trial process: standard library and torch only.
"""

from __future__ import annotations

import itertools
import linecache
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import torch

from autoclone.labels import Prefix, grad_node

Frame = tuple[str, int]
_STAMP = "autoclone"
_READERS = "autoclone.readers"  # (epoch, frames) of the first nodes that consumed a node
READERS = 8  # kept per node: with that many, which lines read it is not known
_AT = "autoclone.at"  # (code, instruction offset) of the user's call that made a node
#: The tracer's own files: their frames are never the user's, even where the user's folder
#: holds autoclone itself (``bench/dispatch_mode.py`` traces with the repository as prefix).
_OWN_FILES = frozenset(
    os.path.join(os.path.dirname(__file__), name)
    for name in ("tracer.py", "trace_base.py", "carried_state.py")
)

#: Ops whose outputs are several views of one input (the multi-output view error).
_MULTI_VIEW = frozenset({"unbind", "split", "chunk", "tensor_split", "split_with_sizes"})


@dataclass(slots=True)
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


class _Holder(tuple):  # type: ignore[type-arg]
    """What the pack hook returns: ``(detached tensor, record key, storage, tracer)``. The
    record is released when autograd drops the holder; a tuple is built in C, and
    ``__del__`` costs less than ``weakref.finalize``."""

    __slots__ = ()

    def __del__(self) -> None:
        try:
            self[3]._release(self[1], self[2])
        except Exception:  # noqa: BLE001 - never raise from a finaliser (interpreter exit)
            pass


def _storage(t: torch.Tensor) -> int:
    """Which memory a tensor uses: views and ``.data`` share it with their base, so a write
    through any of them is a write into what was saved (a tensor with no storage: itself)."""
    try:
        return int(t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):
        return id(t)


# What a function can do, decided once per function object from its name.
_READ = 0  # attribute reads (``.shape``, ``.grad``, ``.data``): never write, make no node
_PLAIN = 1  # may make graph nodes; writes only if called with ``inplace=``/``out=``
_WRITE = 2  # may write into its arguments by name
_MULTI = 4  # returns several views of one input (the multi-output view error)


def _kind(func: Any) -> tuple[str, int]:
    """The name and kind of a torch function. Only these calls can write into their
    arguments, by PyTorch's naming rules: a trailing underscore, in-place operators,
    item assignment (and ``inplace=``/``out=``, checked per call)."""
    name = getattr(func, "__name__", "") or str(func)
    if name == "__get__":
        return name, _READ
    kind = _PLAIN
    if name.endswith("_") or name.startswith("__i") or name == "__setitem__":
        kind |= _WRITE
    if name in _MULTI_VIEW:
        kind |= _MULTI
    return name, kind


def _grad_fn(value: Any) -> Any:
    """``value.grad_fn`` without side effects: for a view made under no_grad whose base
    was later written, merely reading ``grad_fn`` raises, and the tracer must never
    raise where the user's script would not."""
    return grad_node(value) if isinstance(value, torch.Tensor) else None


def _tensors(args: Any, kwargs: Any) -> list[torch.Tensor]:
    """The tensors a call was given, one list or tuple deep: what it can write into."""
    found: list[torch.Tensor] = []
    for value in itertools.chain(args, (kwargs or {}).values()):
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(v for v in value if isinstance(v, torch.Tensor))
    return found


_CALL_IMPL = torch.nn.Module._call_impl.__code__


def _running_module() -> Any:
    """The innermost module whose ``__call__`` is running, read from the stack."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _CALL_IMPL:
            return frame.f_locals.get("self")
        frame = frame.f_back
    return None


def _in_optimizer(prefix: Prefix) -> bool:
    """The write is an optimizer's own: a ``torch.optim`` frame comes before any frame of
    the user's. A closure passed to ``step`` (Lightning's automatic optimization runs
    ``training_step`` and ``backward`` inside ``optimizer.step(closure)``) writes as the
    user's code, from the user's lines."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(prefix) and filename not in _OWN_FILES:
            return False
        if "/torch/optim/" in filename.replace("\\", "/"):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _user_frame(prefix: Prefix) -> Any:
    """The innermost frame in the user's own files, past the tracer's own: the one whose
    locals can name a module (``autoclone.carried_state``)."""
    frame: Any = sys._getframe(1)
    while frame is not None and not (
        frame.f_code.co_filename.startswith(prefix) and frame.f_code.co_filename not in _OWN_FILES
    ):
        frame = frame.f_back
    return frame


def _reaches(nodes: list[Any], targets: list[Any], budget: int = 20_000) -> bool:
    """The graph from ``nodes`` holds one of the ``targets`` nodes (the loss an earlier
    backward call started from, added into this one: ``(loss + loss_adv).backward()``)."""
    wanted = {id(t) for t in targets if t is not None}
    queue = [node for node in nodes if node is not None]
    seen: set[int] = set()
    while queue and len(seen) < budget and wanted:
        node = queue.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in wanted:
            return True
        queue += [child for child, _ in node.next_functions if child is not None]
    return False


def _from_another(target: torch.Tensor, value: torch.Tensor, budget: int = 2000) -> bool:
    """``value`` requires grad through a tensor other than ``target``'s own leaf: a
    source weight copied into a tied one, a shared prompt added in; not the tensor's own
    norm (``w /= w.norm()``, a projection of itself)."""
    if not value.requires_grad:
        return False
    own = target._base if target._base is not None else target
    queue: list[Any] = [_grad_fn(value)]
    seen: set[int] = set()
    if queue[0] is None:
        return value is not own and value._base is not own
    while queue and len(seen) < budget:
        node = queue.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and variable is not own:
            return True
        queue += [child for child, _ in node.next_functions]
    return False


def source_of(at: Any) -> str:
    """The source text of the user's expression that made a node (``(1 - ALPHA) *
    outputs`` on a line that also reads ``Z``): the instruction's own columns."""
    if at is None:
        return ""
    code, lasti = at
    try:
        line, end, col, end_col = list(code.co_positions())[lasti // 2]
    except (IndexError, ValueError):
        return ""
    if line is None or line != end or col is None or end_col is None:
        return ""
    text = linecache.getline(code.co_filename, line).encode("utf-8")
    return text[col:end_col].decode("utf-8", errors="replace")


#: Nodes that combine losses into a total: sums and scalings (a reduction is not one: a
#: tensor summed into the loss is an output, not a loss).
_COMBINING = frozenset({"AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1",
                        "MulBackward0", "MulBackward1", "DivBackward0", "DivBackward1",
                        "NegBackward0"})  # fmt: skip


def loss_term(node: Any, roots: list[Any], budget: int = 64) -> bool:
    """``node`` is a term of the loss ``roots`` held: met from them through sums and
    scalings alone (``total = w_cls * cls + w_reg * reg`` holds ``cls``). A value kept from
    it is the loss itself (a running mean of the loss), not a state the model computes."""
    queue = [r for r in roots if r is not None]
    seen = 0
    while queue and seen < budget:
        here, seen = queue.pop(0), seen + 1
        if here is node:
            return True
        if type(here).__name__ in _COMBINING:
            queue += [c for c, _ in here.next_functions if c is not None]
    return False
