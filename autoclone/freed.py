"""Which of the older graphs a backward call reaches did an earlier call free.

A backward call that reaches into graphs built before the last call crosses "stale
edges": a node made now consuming a node made earlier. Not every such edge is the
carry. An advantage made before the actor's backward call, detached in the actor's
loss and read by the critic's, is older than the critic's loss, yet nothing freed it;
the critic's hidden state carried from the previous rollout is the graph that was
freed. Whether a region was freed can be read from its nodes (``node._saved_self``
raises once an earlier call released it), but only before the call runs: the call
releases what it executes before it meets the freed node. So the tracer marks each
stale edge's older region when a call starts, and names the carry after it failed.
Runs inside the trial process, like the tracer: standard library and torch only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from autoclone.trace_base import _STAMP

_FREED = "autoclone.freed"  # (epoch of the call that looked, whether the region was freed)
_RUN_BY = "autoclone.run_by"  # epoch of the first call that ran through the node and freed
#: Nodes of the older region read per stale edge, and of the whole graph per call.
REGION, GRAPH = 256, 20_000
_SAVED: dict[type, tuple[str, ...]] = {}  # the ``_saved_*`` attributes of each node type


def stale_edges(
    roots: list[Any], budget: int = GRAPH, run_by: int | None = None
) -> Iterator[tuple[Any, Any, Any, Any, Any]]:
    """(consumer node, its stamp, older node, the older node's stamp, the node the stamp is
    on) for each edge where the graph of ``roots`` reaches a node made before its consumer,
    breadth first (nodes made inside a C++ op carry no stamp of their own and inherit their
    consumer's). With ``run_by``, each node met that no freeing call ran yet is noted as
    freed by that one."""
    queue: deque[tuple[Any, Any]] = deque((node, None) for node in roots)
    seen: set[int] = set()
    while queue and len(seen) < budget:
        node, inherited = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if run_by is not None and _RUN_BY not in node.metadata:
            node.metadata[_RUN_BY] = run_by
        owner = node if _STAMP in node.metadata else inherited
        stamp = owner.metadata.get(_STAMP) if owner is not None else None
        for child, _ in node.next_functions:
            if child is None or type(child).__name__ == "AccumulateGrad":
                continue
            old = child.metadata.get(_STAMP)
            if stamp and old and old[0] < stamp[0]:
                yield node, stamp, child, old, owner
            queue.append((child, owner))


def mark(roots: list[Any], epoch: int, frees: bool = True) -> None:
    """Before backward call ``epoch`` runs: note on each older node its graph reaches
    whether an earlier call freed the region made with it, and (``frees``: the call keeps
    no graph) on every node it will run that this call is the one that frees it."""
    for _, _, child, old, _ in stale_edges(roots, run_by=epoch if frees else None):
        if child.metadata.get(_FREED, (None,))[0] != epoch:
            child.metadata[_FREED] = (epoch, _region_freed(child, old[0]))


def freed_by(node: Any) -> int | None:
    """The epoch of the backward call that ran through ``node`` and freed it, if noted."""
    found = node.metadata.get(_RUN_BY)
    return found if isinstance(found, int) else None


def freed(node: Any, epoch: int) -> bool | None:
    """Whether ``node``'s region was freed before call ``epoch`` ran; None if not marked."""
    found = node.metadata.get(_FREED)
    return found[1] if found is not None and found[0] == epoch else None


def _region_freed(start: Any, epoch: int) -> bool:
    """A node made with ``start`` (same stamp epoch, or none) holds released buffers."""
    queue, seen = deque([start]), set[int]()
    while queue and len(seen) < REGION:
        node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if _released(node):
            return True
        for child, _ in node.next_functions:
            stamp = None if child is None else child.metadata.get(_STAMP)
            if child is not None and (stamp is None or stamp[0] == epoch):
                queue.append(child)
    return False


def _released(node: Any) -> bool:
    names = _SAVED.get(type(node))
    if names is None:
        names = _SAVED[type(node)] = tuple(a for a in dir(node) if a.startswith("_saved_"))
    try:
        for name in names:
            getattr(node, name)
        if hasattr(node, "saved_tensors"):  # a custom autograd.Function's node
            node.saved_tensors  # noqa: B018
    except RuntimeError as exc:  # freed, not a saved tensor written since (also raises)
        return "freed" in str(exc)
    return False
