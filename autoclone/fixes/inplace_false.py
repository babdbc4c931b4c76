"""``nn.ReLU(inplace=True)`` -> ``inplace=False`` where the library module that wrote in
place was built (or in the call that wrote: ``F.relu(h, inplace=True)``): the module then
writes its result into a new tensor, the numbers are the same, and it is what people
write. Ranked before every other in-place edit."""

from __future__ import annotations

import re
from collections.abc import Mapping

from autoclone.classify import LEAF_INPLACE
from autoclone.codemods.rewrites import inplace_false
from autoclone.codemods.sites import INPLACE_FALSE, Site
from autoclone.diagnose import Diagnosis, Frame, where
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind

_CALLED = re.compile(r"\bself\.(\w+)\(")


def _called_modules(found: Diagnosis, ctx: Context) -> list[Frame]:
    """For a leaf written in place, where no write was traced: the failing line itself
    (``F.relu(w, inplace=True)``) and the lines that built the modules it calls
    (``self.act = nn.ReLU(inplace=True)`` for ``self.act(self.w)``)."""
    if found.error_class != LEAF_INPLACE or found.failing is None:
        return []
    file, line = found.failing
    names = _CALLED.findall(ctx.line(file, line))
    built = [(file, n) for n, text in enumerate(ctx.lines.get(file, []), start=1)
             if any(re.search(rf"\bself\.{name}\s*=", text) for name in names)]  # fmt: skip
    return [found.failing, *built]


class InplaceFalse(Kind):
    name = INPLACE_FALSE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class == LEAF_INPLACE:  # ``nn.ReLU(inplace=True)`` applied to a weight
            return bool(self.candidates(found, ctx))
        return is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        out: list[Candidate] = []
        frames = [found.module_built, found.mutation, *_called_modules(found, ctx)]
        for frame in dict.fromkeys(f for f in frames if f):
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
