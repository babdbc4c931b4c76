"""``nn.ReLU(inplace=True)`` -> ``inplace=False`` where the library module that wrote in
place was built (or in the call that wrote: ``F.relu(h, inplace=True)``): the module then
writes its result into a new tensor, the numbers are the same, and it is what people
write. Ranked before every other in-place edit."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.classify import LEAF_INPLACE
from autoclone.codemods.rewrites import inplace_false
from autoclone.codemods.sites import INPLACE_FALSE, Site
from autoclone.diagnose import Diagnosis, Frame, where
from autoclone.fixes._ast import FUNCTIONS
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.parsed import parsed

_CALLED = re.compile(r"\bself\.(\w+)\(")
_INPLACE_TRUE = re.compile(r"\binplace\s*=\s*True\b")


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


def _registry_lines(frame: Frame, ctx: Context) -> list[Frame]:
    """Where a module built by a factory line (``ACTIVATIONS[name](**overrides)``) takes
    its flag: the lines of a module-level assignment of a name the line reads that say
    ``inplace=True`` (a registry of ``partial(nn.LeakyReLU, inplace=True)`` entries)."""
    file, line = frame
    text = ctx.texts.get(file, "")
    try:
        tree = parsed(text)
    except SyntaxError:
        return []
    here = next((n for n in ast.walk(tree) if isinstance(n, ast.stmt)
                 and n.lineno <= line <= (n.end_lineno or n.lineno)
                 and not isinstance(n, FUNCTIONS + (ast.ClassDef,))), None)  # fmt: skip
    if here is None:
        return []
    read = {n.id for n in ast.walk(here) if isinstance(n, ast.Name)}
    out = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") in read
                                                 for t in stmt.targets):  # fmt: skip
            out += [(file, n) for n in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
                    if _INPLACE_TRUE.search(ctx.line(file, n))]  # fmt: skip
    return out


class InplaceFalse(Kind):
    name = INPLACE_FALSE
    alias_reference = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class == LEAF_INPLACE:  # ``nn.ReLU(inplace=True)`` applied to a weight
            return bool(self.candidates(found, ctx))
        return is_conflict(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        out: list[Candidate] = []
        frames = [found.module_built, found.mutation, *_called_modules(found, ctx)]
        built = found.module_built
        if built is not None and not _INPLACE_TRUE.search(ctx.line(*built)):
            frames += _registry_lines(built, ctx)
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
