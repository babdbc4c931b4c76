"""Fixes other than a clone, derived from the clone sites so ids and positions agree.

* ``detach``: the same place as a clone site, ``.detach()`` instead of ``.clone()``;
  allowed only where the tracer shows a graph reaching across iterations.
* ``item``: an accumulator's value without its graph, ``float(total_loss)``.
* ``no_grad``: an in-place statement wrapped in ``with torch.no_grad():``; the cure for
  updating a leaf that requires grad (manual SGD).
"""

from __future__ import annotations

import re
from dataclasses import replace

from autoclone.codemods.sites import DETACH, INPLACE, ITEM, NO_GRAD, Site

_IMPORTS_TORCH = re.compile(r"^import torch\s*(#.*)?$", re.MULTILINE)


def as_detach(site: Site) -> Site | None:
    """The clone site read as a detach; in-place targets have no detach form."""
    if site.kind == INPLACE:
        return None
    return replace(site, id=f"{site.id}:detach", fix=DETACH,
                   code=site.code.removesuffix(".clone()") + ".detach()")  # fmt: skip


def as_item(site: Site) -> Site | None:
    """An accumulator read as a plain number: ``float(total)`` works for a 0 start value
    and for a one-element tensor alike, and drops the tensor's graph."""
    if site.kind == INPLACE:
        return None
    return replace(site, id=f"{site.id}:item", fix=ITEM, code=f"float({site.target})")


def as_no_grad(site: Site, source: str, block: tuple[int, ...] = ()) -> Site | None:
    """The in-place statement of an ``inplace`` site, and the update statements right
    below it (``block``), run under ``torch.no_grad()``."""
    if site.kind != INPLACE or not site.own_line or not _IMPORTS_TORCH.search(source):
        return None
    lines = source.splitlines()
    body = "; ".join(lines[n - 1].strip() for n in (site.line, *block))
    return replace(site, id=f"{site.id}:no_grad", fix=NO_GRAD, block=block,
                   code=f"with torch.no_grad(): {body}")  # fmt: skip
