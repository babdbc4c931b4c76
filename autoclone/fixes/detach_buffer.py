"""``.detach()`` of the value stored into a statistic: a registered buffer the module
updates from itself in ``forward`` (EMA prototypes, a running centre, a memory bank:
``self.protos = m * self.protos + (1 - m) * batch_means``), or a running value of the loss
itself (a loss balancer's meter: ``self.value = m * self.value + (1 - m) * x`` fed the
loss terms, whose ``1 / value`` weights them), carries each step's graph into the next,
and the next backward call runs into the one the last call freed.

A loss's own running mean that weights it is a constant the way metric objects keep
their state (ignite and Lightning detach what a metric stores): differentiated, the
current step's weight ``1 / L`` would cancel its own term's gradient.

A buffer is declared not learned (``register_buffer``): no gradient is meant to flow
through its update, the current batch's included. So the cut is where the value is
stored, not right after the backward call (which keeps the current batch's path into the
statistic, the trap of a recurrent state's cure), and the patch is not held to the
backward calls the original completed: those differentiated through the update, which
is what the declaration rules out. Judged like every cut otherwise: K finite steps,
every tensor the original trained still reached, no optimizer stepping on a call that no
longer reaches its parameters.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes._ast import assigned_pairs, stores_made_at
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.detach import detach_at
from autoclone.parsed import innermost

KIND_NAME = "detach_buffer"


def registered(name: str, texts: Mapping[str, str]) -> bool:
    """``self.register_buffer("name", ...)`` somewhere in the project."""
    pattern = re.compile(rf"register_buffer\(\s*(name\s*=\s*)?[\"']{re.escape(name)}[\"']")
    return any(pattern.search(text) for text in texts.values())


def buffer_stores(found: Diagnosis, ctx: Context) -> list[Site]:
    """The values stored into a registered buffer on the lines that made the carried
    graph (one element of a tuple assignment too), detached."""
    out: list[Site] = []
    for file, text, stored, made in stores_made_at(found, ctx.texts):
        if not isinstance(stored, ast.Attribute) or ast.unparse(stored.value) != "self":
            continue
        if registered(stored.attr, ctx.texts):
            out.append(detach_at(file, text, made))
    return list({s.id: s for s in out + _loss_statistic(found, ctx)}.values())


def _loss_statistic(found: Diagnosis, ctx: Context) -> list[Site]:
    """Where the carried value is a term of an earlier loss and the line that read it
    stores a value made from itself (``self.value = m * self.value + (1 - m) * x``): that
    value, detached."""
    read = found.carry_consumer
    text = ctx.texts.get(read[0], "") if read else ""
    if not found.carry_loss_term or read is None or not text:
        return []
    node = innermost(text, read[1], (ast.Assign,))
    pairs = assigned_pairs(node)
    if len(pairs) != 1 or not isinstance(node, ast.Assign) or node.lineno != read[1]:
        return []
    target, value = pairs[0]
    reads_itself = ast.unparse(target) in {ast.unparse(n) for n in ast.walk(value)}
    return [detach_at(read[0], text, value, "stored")] if reads_itself else []


class DetachBuffer(Kind):
    name = KIND_NAME
    reference = NONE
    @staticmethod
    def rebuilds_earlier(found: Diagnosis) -> bool:
        """A running value of the loss made constant: every call differentiates another
        program from the first step on, so earlier conflicts' edits are held to numbers
        computed again with this edit in (``repair``). A registered buffer's cut is held
        to the earlier references as they are: where the step reads the value it just
        stored, they reject it, and the cut of the carried read is taken (a codebook's
        usage entropy keeps its current batch's gradient)."""
        return found.carry_loss_term

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and bool(buffer_stores(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-1.05, (s,)) for s in buffer_stores(found, ctx)]  # before any detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the value stored "
            f"into the {self._what(found)} no longer carries this step's graph into the next "
            "step, so the next backward call stops at its own step."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        if found.carry_loss_term:
            return [
                "this changes what is differentiated: the running value of the loss is a "
                "constant now, the current batch's part included (a metric keeps what it "
                "stores detached; a detach of the carried value alone would still "
                "differentiate the current loss through the weight made from it)"
            ]
        return [
            "this changes what is differentiated: no gradient flows through the buffer's "
            "update any more, the current batch's included (the module registers it as a "
            "buffer, a statistic that is not learned; a detach right after the backward call "
            "would still differentiate the current batch's part of it)"
        ]

    @staticmethod
    def _what(found: Diagnosis) -> str:
        return "running value of the loss" if found.carry_loss_term else "buffer"


KIND = DetachBuffer()
