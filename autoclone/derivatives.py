"""What ``torch.autograd.grad`` calls did, in traced runs: which call freed the graph a
later backward call runs into, and whether that call's loss was made from a derivative
taken without ``create_graph``.

Forces taken as ``-dE/dx`` and fitted by a loss, a PDE residual's ``u_t``: the program
computes a loss from the derivative's value, so it means the derivative to be part of the
graph (``create_graph=True``); with ``retain_graph=True`` instead the term would train
nothing through itself. A derivative taken without either has no graph, so its use is
followed by value, not by graph: each torch call given a tensor made from it makes
tensors made from it. Only traced runs do this, and only after such a call.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch

from autoclone.trace_base import Frame, _grad_fn, _reaches, _tensors

#: Tensors followed at most (a long run's derivatives are met again and again)
LIMIT = 50_000
#: Nodes of a freed graph noted, and walked from a term to find one of them
FREED_NODES = 4096
#: Calls that scale one operand by another: a derivative given to one with a tensor that
#: requires grad weights that tensor, a use that means the derivative as a constant
_SCALING = frozenset({"mul", "rmul", "matmul", "rmatmul", "mm", "bmm", "mv", "dot", "einsum",
                      "div", "truediv", "rtruediv", "true_divide", "outer", "addcmul",
                      "addcdiv", "linear", "prod"})  # fmt: skip
#: Calls that keep a weighted term linear in its weights (sums, means, reshapes, scaling):
#: any other call given such a term with a graph fits it (a PDE residual squared)
_LINEAR = frozenset({"add", "radd", "iadd", "sub", "rsub", "isub", "sum", "mean", "neg",
                     "mul", "rmul", "imul", "div", "truediv", "itruediv", "getitem", "view",
                     "reshape", "flatten", "squeeze", "unsqueeze", "cat", "stack", "t",
                     "transpose", "permute", "contiguous", "clone", "to", "float", "double",
                     "expand", "expand_as", "view_as", "narrow", "select"})  # fmt: skip


class Derived:
    """The tensors made from such a derivative, by id, held weakly."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ReferenceType[torch.Tensor]] = {}
        #: the terms it weighted, and the tensors made from them by linear calls
        self._weighted: dict[int, weakref.ReferenceType[torch.Tensor]] = {}
        self._fitted = False  # a weighted term went through a call that is not linear
        #: the interior nodes of the graph the last freeing call ran through (its buffers
        #: freed; the parameters' ``AccumulateGrad`` nodes, shared by every graph, left out)
        self._freed: list[Any] = []

    @property
    def weights(self) -> bool:
        """A tensor made from the derivative weighted, element by element, one that
        requires grad and is not made from it, and the loss stayed linear in that term."""
        return bool(self._weighted) and not self._fitted

    def __bool__(self) -> bool:
        return bool(self._refs)

    def add(self, values: Iterable[Any]) -> None:
        for value in values:
            if isinstance(value, torch.Tensor) and len(self._refs) < LIMIT:
                self._refs[id(value)] = weakref.ref(value)

    def holds(self, tensor: Any, among: dict[int, Any] | None = None) -> bool:
        known = (self._refs if among is None else among).get(id(tensor))
        return known is not None and known() is tensor

    def spread(self, name: str, args: Any, kwargs: Any, out: Any) -> None:
        """A call given a tensor made from the derivative made ``out`` from it too. A
        scaling call given such a tensor of several elements and a tensor with a graph
        made elsewhere used the derivative as per-element weights (saliency weighting a
        feature penalty, a Fisher diagonal weighting EWC's penalty): a constant, as
        written, as long as the loss stays linear in the weighted term. A fitted
        derivative is reduced to a loss before any learned coefficient scales it, or the
        product is itself fitted (a PDE residual ``u_t + u * u_x``, squared)."""
        tensors = list(_tensors(args, kwargs))
        held = [self.holds(t) for t in tensors]
        if not any(held):
            return
        # indices and masks made from it (``sal.topk(k).indices``) carry no derivative on:
        # what they select differentiates nothing through the derivative
        outs = [t for t in (out if isinstance(out, tuple | list) else (out,))
                if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]
        self.add(outs)
        op = name.strip("_").rsplit(".", 1)[-1]
        if any(self.holds(t, self._weighted) for t in tensors):
            self._follow(op, outs)
        if op not in _SCALING:
            return
        pairs = list(zip(tensors, held, strict=True))
        graphs = [t for t, h in pairs if t.requires_grad and not h]
        if (graphs and any(h and t.numel() > 1 for t, h in pairs)) or self._reads_freed(graphs):
            self._weighted.update((id(t), weakref.ref(t)) for t in outs if t.requires_grad)

    def freed(self, roots: list[Any]) -> None:
        """A call without ``create_graph`` or ``retain_graph`` ran through ``roots``' graph."""
        nodes: list[Any] = []
        queue, seen = [r for r in roots if r is not None], set[int]()
        while queue and len(seen) < FREED_NODES:
            node = queue.pop()
            if id(node) not in seen:
                seen.add(id(node))
                nodes += [] if hasattr(node, "variable") else [node]
                queue += [child for child, _ in node.next_functions if child is not None]
        self._freed = nodes

    def _reads_freed(self, graphs: list[torch.Tensor]) -> bool:
        """One of ``graphs`` is made from the graph the derivative's call freed: a number
        made from the derivative scaling the loss's own term (VQGAN's adaptive weight
        ``d_weight * g_loss``, a norm ratio) weights it, where a learned coefficient of a
        fitted penalty (``lam * r1``) reads a graph of its own."""
        return bool(self._freed) and any(
            _reaches([t.grad_fn], self._freed, budget=FREED_NODES) for t in graphs
        )

    def _follow(self, op: str, outs: list[torch.Tensor]) -> None:
        """A weighted term given to a call: still linear in its weights, or fitted."""
        grads = [t for t in outs if t.requires_grad]  # ``.item()``, ``.detach()``: a log
        if grads and op not in _LINEAR:
            self._fitted = True
        elif len(self._weighted) < LIMIT:
            self._weighted.update((id(t), weakref.ref(t)) for t in grads)


class GradCalls:
    """The recent ``torch.autograd.grad`` calls that freed their graph (epoch, the user's
    frames, the roots of the graph), and the tensors their derivatives made."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, list[Frame], list[Any]]] = []
        #: the recent calls without ``create_graph`` (epoch, frames): their derivatives
        #: are constants, so a loss made from them alone has no graph
        self.constant: list[tuple[int, list[Frame]]] = []
        self.derived = Derived()

    def called(self, kwargs: dict[str, Any], result: Any, outputs: Any, epoch: int,
               frames: Callable[[], list[Frame]]) -> None:  # fmt: skip
        """A call without ``create_graph`` returned constants to follow; one without
        ``retain_graph`` either freed the graph it went through from ``outputs``."""
        if not kwargs.get("create_graph"):
            self.derived.add(result)
            self.constant = [*self.constant[-15:], (epoch, frames())]
        if not (kwargs.get("retain_graph") or kwargs.get("create_graph")):
            roots = [_grad_fn(t) for t in _tensors((outputs,), None)]
            self.derived.freed(roots)
            self.calls = [*self.calls[-15:], (epoch, frames(), roots)]

    def constant_in(self, epoch: int, roots: list[Any]) -> list[Frame] | None:
        """Where the last call of this pass that returned a constant was made, when the
        loss (``roots``, tensors) was made from a derivative: a Hamiltonian net's loss
        reads the weights only through ``dH/dx``, so without ``create_graph`` it has no
        graph at all."""
        mine = [frames for e, frames in self.constant if e == epoch]
        if not mine or not any(self.derived.holds(t) for t in roots):
            return None
        return mine[-1]

    def freeing(self, epoch: int, roots: list[Any]) -> list[Frame] | None:
        """Where the call that freed the failing backward call's graph was made: of this
        pass's calls, the last whose graph the failing call reaches (``roots``); else the
        pass's last one (the tracer saw no root); None when the pass made none."""
        mine = [(frames, nodes) for e, frames, nodes in self.calls if e == epoch]
        if not mine:
            return None
        for frames, nodes in reversed(mine):
            if _reaches(roots, nodes):
                return frames
        return mine[-1][0]
