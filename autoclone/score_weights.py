"""Policy-gradient weights that carry a graph: an edit that kept the values and not the
estimator.

In a score-function term, ``log_prob(action) * advantage`` (REINFORCE, A2C, PPO's
``ratio * advantage``), the advantage or return is a constant by the estimator's
definition: the gradient is the log-probability's, weighted. An advantage computed from a
critic's values without a detach makes the policy loss train the critic too. The
program's error (GAE's advantages normalised in place, a version error) often comes from
that very graph, and the edit that removes the error without cutting it (the
normalisation written out of place) reproduces every number the program computes as
written: a wrong patch no value comparison catches.

In the trial (``install``) every ``torch.distributions`` class's ``log_prob`` marks its
output's graph node, and from the first such mark on, a product of a tensor whose graph
holds one with a tensor that requires grad and holds none notes the user's line. In
autoclone a patched run that noted any line is refused (``refused``): a cut where the
weight is made repairs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from autoclone import labels
from autoclone.labels import Frame, Prefix

_MARK = "autoclone_log_prob"
#: Graph nodes walked from a factor looking for a log-probability's mark
_BUDGET = 256


class Seen(labels.Seen):
    """Lines of the user's where a log-probability was weighted by a tensor with a graph
    (noted as ``labels.Seen`` notes its lines: the first frame in the user's files)."""

    def __init__(self, prefix: Prefix) -> None:
        super().__init__(prefix)
        self.active = False  # a log_prob output with a graph was made: products are watched
        #: the tracer's ``note_weight(weight)``, in traced runs: where the weight's graph
        #: can be cut (``autoclone.estimate``)
        self.weight_probe: Callable[[Any], None] | None = None


def install(prefix: Prefix) -> Seen:
    """Mark the distributions' log-probabilities; the products that weight them are
    watched from the first one with a graph on, so a script that makes none pays nothing
    per product."""
    import torch.distributions as dist

    seen = Seen(prefix)
    for cls in _subclasses(dist.Distribution):
        if "log_prob" in cls.__dict__:
            cls.log_prob = _marked(cls.__dict__["log_prob"], seen)  # type: ignore[attr-defined]
    return seen


def _watch_products(seen: Seen) -> None:
    import torch

    for owner, name in ((torch.Tensor, "__mul__"), (torch.Tensor, "__rmul__"),
                        (torch.Tensor, "mul"), (torch, "mul")):  # fmt: skip
        setattr(owner, name, _product(getattr(owner, name), seen, torch))


def _subclasses(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _marked(original: Any, seen: Seen) -> Any:
    def log_prob(self: Any, value: Any) -> Any:
        out = original(self, value)
        node = labels.grad_node(out)
        if node is not None:
            node.metadata[_MARK] = True
            if not seen.active:
                seen.active = True
                _watch_products(seen)
        return out

    return log_prob


def _product(original: Any, seen: Seen, torch: Any) -> Any:
    @functools.wraps(original)  # the tracer names the call by it
    def product(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        weight = _weight(a, b, torch)
        if weight is not None and not _coefficient(weight):
            seen.note()
            if seen.weight_probe is not None:
                seen.weight_probe(weight)
        return original(a, b, *args, **kwargs)

    return product


def _weight(a: Any, b: Any, torch: Any) -> Any:
    """Of two factors that require grad (grad on), the one whose graph holds no
    log-probability when the other's does; None otherwise. Each graph is walked once."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.requires_grad
            and b.requires_grad and torch.is_grad_enabled()):  # fmt: skip
        return None
    scored = _scored(a)
    if scored == _scored(b):
        return None
    return b if scored else a


def _scored(tensor: Any) -> bool:
    """The tensor's graph holds a distribution's log-probability (a few hundred nodes in)."""
    nodes = islice(labels.graph_nodes(labels.grad_node(tensor)), _BUDGET)
    return any(node.metadata.get(_MARK) for node in nodes)


def _coefficient(tensor: Any) -> bool:
    """A one-number weight computed from one leaf alone: SAC's temperature ``log_alpha``
    (or its ``exp()``) times the log-probabilities is the temperature's own loss, trained
    through the product by design. A per-sample weight (a return less a baseline, a
    critic's values) is never one number, and a critic's value reaches several leaves."""
    if tensor.numel() != 1:
        return False
    root = labels.grad_node(tensor)
    if root is None:
        return True  # the leaf itself
    nodes = list(islice(labels.graph_nodes(root), _BUDGET + 1))
    return len(nodes) <= _BUDGET and sum(hasattr(node, "variable") for node in nodes) == 1


def refused(lines: Iterable[Frame]) -> str | None:
    """Why a patched run is refused: the first line where a weight with a graph multiplied
    a log-probability; None when there is none."""
    found = [tuple(f) for f in lines]
    if not found:
        return None
    file, line = found[0]
    return (
        f"the weight of the log-probabilities at {file}:{line} requires grad: a policy "
        "gradient takes it as a constant (an advantage, a return), and with its graph the "
        "policy loss also trains what it is computed from (a critic's values). Detach the "
        "values it is computed from where they are made"
    )
