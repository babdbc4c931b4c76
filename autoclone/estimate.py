"""Where a policy gradient's weight takes in a critic's graph: the line to detach.

A score-function loss, ``log_prob(action) * advantage``, treats the advantage as a
constant. An advantage computed from a critic's values with their graph (GAE over values
stacked as the rollout kept them) is the bug, and an in-place normalisation of it is
where autograd notices. The cure a maintainer writes is a cut where the estimate is made
(``values = torch.stack(...).detach()`` in the buffer's ``compute_gae``): then the
advantage and the return target are both constants, and the critic trains only through
its own loss. Detaching the advantage alone, late, leaves the return target carrying the
critic's graph; detaching the critic's output itself starves the value loss.

So, at the failing backward call of the traced run, the weight's graph is split by the
user line that made each node (the tracer's stamps), and a line is a cut when blocking
its nodes (a) leaves the weight reaching no parameter and (b) takes from the loss no
parameter that blocking the weight itself would not. Lines are offered deepest first:
nearest to where the estimate reads the model, so everything made from it is constant.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from autoclone.trace_base import _STAMP

Frame = tuple[str, int]

#: Graph nodes walked from the weight, and from the loss for each line tried
BUDGET = 20_000
#: Lines tried, deepest first, and cuts kept
TRIED, KEPT = 12, 3


def cuts(weight: Any, roots: Iterable[Any], targets: Iterable[Any] = ()) -> list[Frame]:
    """The user lines (innermost frame) where detaching cuts ``weight`` (a ``grad_fn``)
    from every parameter and takes nothing else from the loss whose graph starts at
    ``roots``; none when a walk runs past its budget. What the loss reaches only through
    a loss's target (``targets``: a return the critic regresses on, made from the same
    rewards) is no training the cut may keep: a target is a constant too."""
    lines = _lines_by_depth(weight)
    if lines is None:
        return []
    roots = [r for r in roots if r is not None]
    labels = {id(t) for t in targets if t is not None}
    kept_by_weight = _params(roots, {id(weight)} | labels)
    if kept_by_weight is None:
        return []
    out: list[Frame] = []
    for frame, nodes in lines[:TRIED]:
        blocked = {id(n) for n in nodes}
        if _params([weight], blocked) != set():
            continue  # the weight still reaches a parameter around this line
        if _params(roots, blocked | labels) != kept_by_weight:
            continue  # the loss would lose a parameter it trains otherwise
        out.append(frame)
        if len(out) >= KEPT:
            break
    return out


def _lines_by_depth(weight: Any) -> list[tuple[Frame, list[Any]]] | None:
    """The weight graph's nodes grouped by the innermost user line that made them, the
    line whose nodes lie deepest first: by the longest path from the weight, so a value
    every step of a recursion reads (GAE's stacked values) comes after none of them."""
    order = _topological(weight)
    if order is None:
        return None
    distance = {id(weight): 0}
    depth: dict[Frame, int] = {}
    nodes: dict[Frame, list[Any]] = {}
    for node in order:
        here = distance[id(node)]
        stamp = node.metadata.get(_STAMP)
        if stamp and stamp[1]:
            frame = (str(stamp[1][0][0]), int(stamp[1][0][1]))
            depth[frame] = max(depth.get(frame, 0), here)
            nodes.setdefault(frame, []).append(node)
        for child, _ in node.next_functions:
            if child is not None:
                distance[id(child)] = max(distance.get(id(child), 0), here + 1)
    ordered = sorted(nodes, key=lambda f: -depth[f])
    return [(f, nodes[f]) for f in ordered]


def _topological(root: Any) -> list[Any] | None:
    """The graph's nodes, each before every node it consumes; None past the budget."""
    post: list[Any] = []
    seen = {id(root)}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            post.append(node)
            continue
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, False))
        if len(seen) > BUDGET:
            return None
    return post[::-1]


def _params(roots: list[Any], blocked: set[int]) -> set[int] | None:
    """Ids of the parameters (``AccumulateGrad`` nodes' variables) reached from ``roots``
    without passing through ``blocked`` nodes; None past the budget."""
    found: set[int] = set()
    todo = [r for r in roots if id(r) not in blocked]
    seen = {id(r) for r in todo}
    while todo:
        node = todo.pop()
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen and id(child) not in blocked:
                seen.add(id(child))
                todo.append(child)
        if len(seen) > BUDGET:
            return None
    return found
