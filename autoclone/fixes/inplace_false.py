"""``nn.ReLU(inplace=True)`` -> ``inplace=False`` where the library module that wrote in
place was built (or in the call that wrote: ``F.relu(h, inplace=True)``): the module then
writes its result into a new tensor, the numbers are the same, and it is what people
write. Ranked before every other in-place edit."""

from __future__ import annotations

from collections.abc import Mapping

from autoclone.codemods.rewrites import inplace_false
from autoclone.codemods.sites import INPLACE_FALSE, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind


class InplaceFalse(Kind):
    name = INPLACE_FALSE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        out: list[Candidate] = []
        for frame in dict.fromkeys(f for f in (found.module_built, found.mutation) if f):
            file, line = frame
            sites = inplace_false(file, line, ctx.line(file, line))
            out += [Candidate(-1.0 + len(out) / 100, (s,)) for s in sites]
        return out

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `inplace=False`: the module then "
            "writes its result into a new tensor, and the tensor saved for backward stays as "
            "it was."
        )


KIND = InplaceFalse()
