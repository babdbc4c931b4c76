"""Values made from a derivative that ``torch.autograd.grad`` took without
``create_graph``: whether the loss a later backward call differentiates is one of them.

Forces taken as ``-dE/dx`` and fitted by a loss, a PDE residual's ``u_t``: the program
computes a loss from the derivative's value, so it means the derivative to be part of the
graph (``create_graph=True``); with ``retain_graph=True`` instead the term would train
nothing through itself. A derivative taken without either has no graph, so its use is
followed by value, not by graph: each torch call given a tensor made from it makes
tensors made from it. Only traced runs do this, and only after such a call.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch

from autoclone.trace_base import _tensors

#: Tensors followed at most (a long run's derivatives are met again and again)
LIMIT = 50_000


class Derived:
    """The tensors made from such a derivative, by id, held weakly."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ReferenceType[torch.Tensor]] = {}

    def __bool__(self) -> bool:
        return bool(self._refs)

    def add(self, values: Iterable[Any]) -> None:
        for value in values:
            if isinstance(value, torch.Tensor) and len(self._refs) < LIMIT:
                self._refs[id(value)] = weakref.ref(value)

    def holds(self, tensor: Any) -> bool:
        known = self._refs.get(id(tensor))
        return known is not None and known() is tensor

    def spread(self, args: Any, kwargs: Any, out: Any) -> None:
        """A call given a tensor made from the derivative made ``out`` from it too."""
        if any(self.holds(t) for t in _tensors(args, kwargs)):
            self.add(out if isinstance(out, tuple | list) else (out,))
