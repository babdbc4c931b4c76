"""A value computed once before a loop of optimizer steps, and read by every pass, is
computed in each pass instead: ``z = encoder(X, A)`` once per epoch, then
``head(z[idx])`` for every mini-batch. The first pass's backward call frees the graph of
``z``, the second runs into it. Detaching ``z`` removes the error and stops the encoder
from ever training; the cure is to recompute it with the current weights, the statement
moved to the top of the loop's body.

Recognised from the tracer's carry edge: a frame of the code that made the older graph is
an assignment of one name, before the loop that reads it in that loop's block, or before
a loop around it (a weight penalty built before the epoch loop, read by every batch); it
moves to the top of the loop that reads it. Tried after a detach of the target (a PPO
update's old log-probabilities are computed once on purpose, and a detach of them keeps
every parameter training; a term added to the loss as it is gets no detach), and judged
like every detach, plus: the backward calls the original completed give the same numbers,
and no tensor it differentiated is left without a gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import LOOPS, holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "per_pass"


def _moved(file: str, text: str, stmt: ast.Assign, loop: ast.stmt) -> Site:
    """The statement's lines go; the same statement opens the loop's body."""
    first = loop.body[0]  # type: ignore[attr-defined]
    indent = " " * first.col_offset
    lines = text.splitlines()[stmt.lineno - 1 : (stmt.end_lineno or stmt.lineno)]
    body = "\n".join(indent + line[stmt.col_offset :] for line in lines) + "\n"
    drops = tuple(TextEdit(n, 0, "", drop_line=True)
                  for n in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))  # fmt: skip
    code = lines[0].strip()
    return Site(id=f"{file}:{stmt.lineno}:0:per_pass", file=file, line=stmt.lineno,
                col=stmt.col_offset, kind=STATEMENT, target=code, code=code,
                start=(first.lineno, 0), end=(first.lineno, 0), depth=0, fix=KIND_NAME,
                rewrite=(*drops, TextEdit(first.lineno, 0, body)), after=loop.lineno)  # fmt: skip


def moved_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The producing statement just before the loop whose passes read what it made."""
    outer = found.carry_frames[-1] if found.carry_frames else found.carry_consumer
    if outer is None:
        return []
    file, line = outer
    text = ctx.texts.get(file, "")
    try:
        tree = parsed(text)
    except SyntaxError:
        return []
    loops = sorted((n for n in ast.walk(tree) if isinstance(n, LOOPS)
                    and n.lineno <= line <= (n.end_lineno or n.lineno)),
                   key=lambda n: -n.lineno)  # fmt: skip
    made = {n for f, n in found.producer_frames if f == file}
    for around in loops:  # the statement may sit before a loop around the one that reads it
        held = holding(tree, around.lineno)
        if held is None or held[1][held[2]] is not around:
            return []
        _, block, index = held
        for stmt in block[:index][::-1]:
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            if isinstance(stmt.targets[0], ast.Name) and stmt.lineno in made:
                return [_moved(file, text, stmt, loops[0])]  # into the loop that reads it
    return []


class PerPass(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and bool(moved_sites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-0.5, (s,)) for s in moved_sites(found, ctx)]  # after a target's detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` moved from {where((site.file, site.line), lines)} into the "
            f"loop at {where((site.file, site.after), lines)}: every pass of that loop read the "
            "value it computed once, whose graph the first pass's backward call freed. "
            "Computed in each pass, it has a graph of its own, made with the weights as the "
            "optimizer left them."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "this changes what later passes compute, as training means: each pass computes "
            f"`{chosen[0].code}` with the current weights (the original would have reused the "
            "value from the loop's start), and costs that computation once per pass"
        ]


KIND = PerPass()
