"""A chain of in-place calls whose later argument reads the tensor an earlier call of the
chain already changed (``h.mul_(lam).add_(h[index], alpha=1 - lam)``), made out of place.

Python runs ``h.mul_(lam)`` before it evaluates ``h[index]``, so the in-place statement
mixes ``lam * h`` with the already scaled rows: ``lam*h + (1-lam)*lam*h[index]``, not the
formula it reads as (manifold mixup's ``lam*h + (1-lam)*h[index]``). The program PyTorch
runs with the write allowed keeps that alias, and so would a clone, which is why such a
reference cannot judge this statement: the out-of-place form reads ``h`` as it was before
the statement, which is what the expression says. It is judged like a cut (K steps with
finite losses, every tensor still trained), and the report names the read that changed.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import replace

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.sites import OUT_OF_PLACE, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "alias_out_of_place"


def _chain(call: ast.expr) -> list[ast.Call]:
    """The in-place calls of a method chain, innermost first (``h.mul_(a).add_(b)``)."""
    calls: list[ast.Call] = []
    while (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
           and call.func.attr.endswith("_") and not call.func.attr.endswith("__")):  # fmt: skip
        calls.insert(0, call)
        call = call.func.value
    return calls if isinstance(call, ast.Name) and len(calls) > 1 else []


def aliased_read(stmt: ast.stmt) -> tuple[str, str] | None:
    """(root, read) where a later call of an in-place chain in ``stmt`` reads the root."""
    for node in ast.walk(stmt):
        calls = _chain(node) if isinstance(node, ast.Call) else []
        if not calls:
            continue
        root = calls[0].func.value  # type: ignore[attr-defined]
        assert isinstance(root, ast.Name)  # _chain ends only at a name
        for call in calls[1:]:
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                if any(isinstance(n, ast.Name) and n.id == root.id for n in ast.walk(arg)):
                    return root.id, ast.unparse(arg)
    return None


def _statement(found: Diagnosis, ctx: Context) -> ast.stmt | None:
    at = found.mutation
    text = ctx.texts.get(at[0], "") if at else ""
    held = holding(parsed(text), at[1]) if at and text else None
    return held[1][held[2]] if held else None


def aliased(found: Diagnosis, ctx: Context) -> tuple[str, str] | None:
    """The write's statement reads its own root after the chain changed it."""
    if found.error_class != INPLACE_VERSION or found.mutation is None:
        return None
    stmt = _statement(found, ctx)
    return aliased_read(stmt) if stmt is not None else None


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    if aliased(found, ctx) is None:
        return []
    assert found.mutation is not None
    here = [s for s in ctx.sites if (s.file, s.line) == found.mutation
            and s.fix == OUT_OF_PLACE and s.rewrite]  # fmt: skip
    return [replace(s, id=f"{s.id}:{KIND_NAME}", fix=KIND_NAME) for s in here]


class AliasOutOfPlace(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        """Also where no out-of-place rewrite of the statement exists: then no edit is
        offered at all, since every clone would keep the alias."""
        try:
            return aliased(found, ctx) is not None
        except SyntaxError:
            return False

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        alias = aliased(found, ctx)
        if alias is None or found.mutation is None:
            return ""
        return (
            f"the write at {where(found.mutation, ctx.lines)} reads `{alias[1]}` after an "
            f"earlier in-place call of the same chain changed `{alias[0]}`: a clone would "
            "keep that alias, and which of the two you mean is yours to say; the "
            "out-of-place chain (each `op_` as `op`) reads the values the statement started from"
        )

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-1.0, (s,)) for s in sites(found, ctx)]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: each call of the "
            "chain gives a new tensor, so the tensor autograd saved stays intact and every "
            "argument reads the values the statement started from."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        texts = {f: "\n".join(ls) for f, ls in lines.items()}
        stmt = _statement(found, Context((), texts, lines))
        alias = aliased_read(stmt) if stmt is not None else None
        if alias is None:
            return []
        return [
            f"the original statement read `{alias[1]}` after an earlier in-place call of the "
            f"same chain had already changed `{alias[0]}`; the patch reads it as it was "
            "before the statement, as the expression reads. A clone would have kept the "
            "alias (the numbers PyTorch computes with the write allowed), so no clone was "
            "offered: if you meant the alias, write it as two statements"
        ]


KIND = AliasOutOfPlace()
