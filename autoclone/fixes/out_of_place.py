"""``x += y`` -> ``x = x + y``, ``x.add_(y)`` -> ``x = x.add(y)``: the write goes into a new
tensor with the same numbers, so what autograd saved stays intact. The edit people write
for a conflict on the line that wrote; ranked with clones by where the evidence points."""

from __future__ import annotations

from collections.abc import Mapping

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.sites import OUT_OF_PLACE, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._conflict import is_conflict, ranked_sites
from autoclone.fixes.base import Candidate, Context, Kind


class OutOfPlace(Kind):
    name = OUT_OF_PLACE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked_sites(found, ctx.sites, OUT_OF_PLACE)

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


KIND = OutOfPlace()
