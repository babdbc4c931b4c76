"""``self.cache_k = self.cache_k.detach()`` before a forward writes a buffer it reads back
with values that carry a graph.

LLaMA's reference attention keeps a KV cache as buffers and always attends through it:
``self.cache_k[:b, s:s + n] = xk`` then ``keys = self.cache_k[:b, :s + n]``. Trained, the
buffer takes each step's graph (``CopySlices``) and keeps it: the next step's write chains
onto it, and the next backward call runs into the graph the last one freed. Detaching the
written value would cut the keys off from ``wk`` (the trap: no gradient reaches it); the
cut belongs on the buffer's history, before this step writes into it. The step's own
write, read and gradient stay as they were, so the backward calls the original completed
must come out the same (``keeps_prefix``), and, as every cut, K finite steps with every
tensor the original trained still reached.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.sites import DETACH, INPLACE, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes._ast import FUNCTIONS, self_attribute
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.detach_buffer import registered
from autoclone.parsed import innermost

KIND_NAME = "detach_written_buffer"


def _buffer(node: ast.expr) -> str | None:
    """``x`` of ``self.x``, ``self.x[...]``, ``self.x[...][...]``: the buffer written."""
    attribute = self_attribute(node, subscripts=sys.maxsize)
    return attribute.attr if attribute is not None else None


def _written(stmt: ast.stmt) -> str | None:
    """The buffer a statement writes in place: ``self.x[i] = v``, ``self.x[i].copy_(v)``,
    ``self.x.index_copy_(0, i, v)``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Subscript):  # fmt: skip
        return _buffer(stmt.targets[0])
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
            call.func.attr.endswith("_") and not call.func.attr.endswith("__"):  # fmt: skip
        return _buffer(call.func.value)
    return None


def buffer_cuts(found: Diagnosis, ctx: Context) -> list[Site]:
    """Before the first in-place write of each registered buffer that the function reading
    the carried value writes in place (a cache's keys and values alike), the buffer
    detached."""
    read = found.carry_consumer
    if not crosses_iterations(found) or read is None:
        return []
    text = ctx.texts.get(read[0], "")
    fn = innermost(text, read[1], FUNCTIONS) if text else None
    if fn is None:
        return []
    first: dict[str, int] = {}
    stmts = sorted((n for n in ast.walk(fn) if isinstance(n, ast.stmt)), key=lambda n: n.lineno)
    for stmt in stmts:
        name = _written(stmt)
        if name and registered(name, ctx.texts):
            first.setdefault(name, stmt.lineno)
    out = []
    for name, line in first.items():
        target = f"self.{name}"
        out += [replace(s, id=f"{s.id}:{KIND_NAME}", code=f"{target} = {target}.detach()",
                        fix=DETACH)
                for s in ctx.sites if (s.file, s.line) == (read[0], line) and s.kind == INPLACE
                and s.target == target and s.own_line]  # fmt: skip
    return out


class DetachWrittenBuffer(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True
    classes = (BACKWARD_TWICE, INPLACE_VERSION)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return buffer_cuts(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = buffer_cuts(found, ctx)
        return [Candidate(-1.1, tuple(sites))]  # every buffer the forward writes, at once

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` before {where((site.file, site.line), lines)}: the buffer "
            "is written in place with values that carry this step's graph and keeps it, so "
            "the next step's write chained onto the graph the last backward call freed; "
            "detached before the write, it carries only values into the next step, and this "
            "step's write, read and gradient are as before."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "the buffer still takes this step's values and passes their gradient on; only "
            "its history from earlier steps is cut (a cache meant for generation: during "
            "training, attending over the fresh keys and values is the same computation)"
        ]


KIND = DetachWrittenBuffer()
