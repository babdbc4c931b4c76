"""``.clone()`` of what was saved, of the argument of the in-place op, or of the written
variable just before the write: the saved tensor and the written one stop sharing memory,
and every number stays the same. The folk cure, placed where the evidence points; the
ddmin fallback searches every clone site when no prediction passes."""

from __future__ import annotations

from collections.abc import Mapping

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.sites import ARG, ASSIGN, CLONE, INPLACE, OPERAND, SUBSCRIPT, Site
from autoclone.diagnose import Diagnosis, op_name, where
from autoclone.fixes._conflict import is_conflict, ranked_sites
from autoclone.fixes.base import Candidate, Context, Kind

_WHAT = {
    ASSIGN: "the value assigned",
    SUBSCRIPT: "the slice read",
    ARG: "the argument",
    OPERAND: "the operand",
}


class Clone(Kind):
    name = CLONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked_sites(found, ctx.sites, CLONE)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        at = where((site.file, site.line), lines)
        if site.kind == INPLACE:
            fix = f"Fix: `{site.code}` just before {at}: "
            if found.error_class == INPLACE_VERSION:
                return fix + (
                    "the write lands in a private copy, so the tensor saved for "
                    "backward keeps the version it had when it was saved."
                )
            return (
                fix + "the write goes to an ordinary tensor instead of a view autograd "
                "cannot track."
            )
        fix = f"Fix at {at}: clone {_WHAT.get(site.kind, 'the value')} `{site.target}`: "
        if found.error_class != INPLACE_VERSION:
            return fix + (
                "the in-place write then modifies an ordinary tensor instead of a view "
                "whose changes autograd cannot track."
            )
        if (site.file, site.line) == found.mutation and found.mutation != found.saved:
            return fix + (
                f"the in-place {found.mutation_op or 'operation'} then writes into a copy, "
                "and the tensor saved for backward stays as it was."
            )
        saver = op_name(found.saved_op) or "the operation"
        return fix + (
            f"{saver} then saves a private copy, which the later in-place write cannot "
            "reach; everything else still sees the write."
        )


KIND = Clone()
