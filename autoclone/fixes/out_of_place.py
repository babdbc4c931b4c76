"""``x += y`` -> ``x = x + y``, ``x.add_(y)`` -> ``x = x.add(y)``: the write goes into a new
tensor with the same numbers, so what autograd saved stays intact. The edit people write
for a conflict on the line that wrote; ranked with clones by where the evidence points.

A write into one output of ``chunk``/``split``/``unbind`` (an LSTM cell's
``i, f, g, o = gates.chunk(4, 1)``, then ``i.sigmoid_()``, ``f.sigmoid_()``, ...) is
offered with the writes into its siblings first: PyTorch raises at one write at a time,
and each alone would cost a conflict of its own, two runs each."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import INPLACE_VERSION, MULTI_OUTPUT_VIEW
from autoclone.codemods.sites import OUT_OF_PLACE, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS
from autoclone.fixes._conflict import is_conflict, ranked_sites
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.fixes.detach_buffer import registered
from autoclone.parsed import innermost, parsed

_SPLITS = frozenset({"chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit"})


def _siblings(site: Site, text: str) -> set[str]:
    """The other names a tuple assignment of one ``chunk``/``split``/``unbind`` result
    bound along with the written one, in the write's function, above it."""
    scope = innermost(text, site.line, FUNCTIONS) or parsed(text)
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Assign) and node.lineno < site.line
                and isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "attr", "") in _SPLITS):  # fmt: skip
            continue
        names = {e.id for e in node.targets[0].elts if isinstance(e, ast.Name)}
        if site.target in names:
            return names - {site.target}
    return set()


def with_siblings(first: Site, sites: Sequence[Site], text: str) -> list[Site]:
    """The write's site, then the out-of-place rewrites of its siblings' writes further
    down its function (each sibling's first)."""
    names = _siblings(first, text) if text else set()
    scope = innermost(text, first.line, FUNCTIONS) if names else None
    end = getattr(scope, "end_lineno", None) or len(text.splitlines())
    found: dict[str, Site] = {}
    for s in sorted(sites, key=lambda s: s.line):
        if (s.fix == OUT_OF_PLACE and s.file == first.file and s.target in names
                and first.line < s.line <= end):  # fmt: skip
            found.setdefault(s.target, s)
    return [first, *found.values()]


class OutOfPlace(Kind):
    name = OUT_OF_PLACE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        ranked = ranked_sites(found, ctx.sites, OUT_OF_PLACE)
        if found.error_class != MULTI_OUTPUT_VIEW or not ranked:
            return ranked
        first = ranked[0].sites[0]
        every = with_siblings(first, ctx.sites, ctx.texts.get(first.file, ""))
        if len(every) == 1:
            return ranked
        return [Candidate(ranked[0].rank - 0.5, tuple(every)), *ranked]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        at = where((site.file, site.line), lines)
        fix = f"Fix at {at}: `{site.code}`: the result goes into a new tensor bound to "
        fix += f"`{site.target}`"
        if found.error_class != INPLACE_VERSION:
            return fix + (
                ", an ordinary tensor instead of a view autograd cannot let you write into; "
                "the numbers are the same."
            )
        return fix + (
            ", so the tensor saved for backward keeps the values it had when it was saved; "
            "the numbers are the same."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        """A running statistic (a registered buffer) written as the forward goes: the
        program as written differentiates the terms read from it, which a hand-written
        Batch Renormalization means as constants (its ``r`` and ``d``)."""
        if found.error_class != INPLACE_VERSION or found.saved is None:
            return []
        texts = {file: "\n".join(text) for file, text in lines.items()}
        buffers = [s.target for s in chosen
                   if s.target.startswith("self.") and registered(s.target[5:], texts)]  # fmt: skip
        if not buffers:
            return []
        return [
            f"`{buffers[0]}` is a registered buffer, a running statistic: the terms read from "
            f"it at {where(found.saved, lines)} keep their gradient through the other operand, "
            "as the program is written; if they are meant as constants (Batch "
            "Renormalization's r and d are stop_gradient), detach what they are computed "
            "from there instead, which changes the gradient"
        ]


KIND = OutOfPlace()
