"""An accumulator updated in place in a loop that also appends it to a list each pass
(coverage in a pointer-generator: ``coverages.append(coverage)`` then
``coverage += attn``), made out of place: ``coverage = coverage + attn``.

The list then holds one tensor, again and again: every entry is the final sum, and the
coverage loss ``min(a_t, c_t)`` reads the last step's coverage at every step. The program
PyTorch runs with the write allowed computes exactly that alias, and so would a clone of
anything, which is why such a reference cannot judge this write: the out-of-place sum
gives each pass's entry the value it had when it was appended, which is what appending it
means. It is judged like a cut (K steps with finite losses, every tensor still trained),
and the report says which list's entries changed.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import replace

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.sites import OUT_OF_PLACE, STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import LOOPS
from autoclone.fixes.base import NONE, Candidate, Context, Kind, calls_before
from autoclone.oracle import Reference
from autoclone.parsed import innermost

KIND_NAME = "snapshot_out_of_place"


def _list_of(text: str, line: int, names: set[str]) -> tuple[str, str] | None:
    """(name, list): one of ``names`` that the loop around ``line`` appends, as it is."""
    loop = innermost(text, line, LOOPS) if text else None
    if not isinstance(loop, LOOPS):
        return None
    for node in ast.walk(loop):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append" and len(node.args) == 1
                and isinstance(node.args[0], ast.Name) and node.args[0].id in names):
            return node.args[0].id, ast.unparse(node.func.value)
    return None


def appended_to(found: Diagnosis, ctx: Context) -> tuple[str, str] | None:
    """(accumulator, list): the name the write updates in place, and a list the loop
    around the write appends that name to, as it is."""
    at = found.mutation
    if found.error_class != INPLACE_VERSION or at is None:
        return None
    written = {s.target for s in ctx.sites if (s.file, s.line) == at
               and s.kind == STATEMENT and s.fix == OUT_OF_PLACE and s.target.isidentifier()}
    return _list_of(ctx.texts.get(at[0], ""), at[1], written) if written else None


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    alias = appended_to(found, ctx)
    if alias is None or found.mutation is None:
        return []
    here = [s for s in ctx.sites if (s.file, s.line) == found.mutation and s.kind == STATEMENT
            and s.fix == OUT_OF_PLACE and s.target == alias[0] and s.rewrite]  # fmt: skip
    return [replace(s, id=f"{s.id}:{KIND_NAME}", fix=KIND_NAME) for s in here]


class SnapshotOutOfPlace(Kind):
    name = KIND_NAME
    reference = NONE
    classes = (INPLACE_VERSION,)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-1.0, (s,)) for s in sites(found, ctx)]

    def rebased(self, reference: Reference, ctx: Context) -> Reference:
        """The list now holds each pass's value: an earlier conflict's reference holds the
        alias's numbers from the failing call on, so only the calls before it stay."""
        return calls_before(reference, ctx)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: each pass makes "
            f"a new `{site.target}`, so the tensor autograd saved stays intact and what the "
            "loop appended keeps the value it had then."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        site = chosen[0]
        alias = _list_of("\n".join(lines.get(site.file, [])), site.line, {site.target})
        name, held = alias if alias is not None else (site.target, "the list")
        return [
            f"in the original every entry of `{held}` was the same tensor `{name}`, written "
            "in place after each append, so each held the final value; out of place, each "
            "entry is the value appended on its pass, which changes the numbers that read "
            "them. A clone would have kept the alias (the numbers PyTorch computes with the "
            "write allowed), so no clone was offered"
        ]


KIND = SnapshotOutOfPlace()
