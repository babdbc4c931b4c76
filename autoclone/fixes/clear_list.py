"""``del policy.saved_log_probs[:]`` next to ``del policy.rewards[:]``: a list that
collects tensors with their graphs (REINFORCE's log-probabilities) is emptied after each
update like its siblings, not left to hand the next update the previous one's entries,
whose graph that update's backward call freed.

Recognised from the tracer's carry edge when the older graph was made on a line that
appends to a container (``X.append(...)``), and the program already empties another
container of the same owner (``del X2[:]``, ``X2.clear()``, ``X2 = []``): the edit is
that statement for ``X``, on the line after it, in the program's own style. Without such a
sibling nothing is offered (a replay buffer is meant to keep its entries: there a detach
where they are appended is the cure). A ``.detach()`` of the appended values is tried
first by the detach kind; it fails where the loss needs their gradients, as REINFORCE's
does. Judged like every detach: K steps with finite losses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes.base import NONE, Candidate, Context, Kind

_APPEND = re.compile(r"^\s*(?P<c>[A-Za-z_][\w.]*)\.(append|extend)\(")
_EMPTIES = (
    re.compile(r"^(?P<i>\s*)del (?P<c>[A-Za-z_][\w.]*)\[:\]\s*(#.*)?$"),
    re.compile(r"^(?P<i>\s*)(?P<c>[A-Za-z_][\w.]*)\.clear\(\)\s*(#.*)?$"),
    re.compile(r"^(?P<i>\s*)(?P<c>[A-Za-z_][\w.]*)\s*=\s*\[\]\s*(#.*)?$"),
)


def _owner(container: str) -> str:
    return container.rsplit(".", 1)[0] if "." in container else ""


def appended(found: Diagnosis, ctx: Context) -> str:
    """The container the older graph's value was appended to, if it was."""
    made = found.carry_producer
    match = _APPEND.match(ctx.line(*made)) if made is not None else None
    return match["c"] if match else ""


def _emptying(container: str, file: str, ctx: Context) -> list[Site]:
    """The sibling statements that empty another container of the same owner, each
    rewritten for ``container`` on the line after it."""
    out = []
    for number, text in enumerate(ctx.lines.get(file, []), start=1):
        for pattern in _EMPTIES:
            match = pattern.match(text)
            if match is None or match["c"] == container:
                continue
            if _owner(match["c"]) != _owner(container):
                continue
            indent, code = match["i"], text.strip().split("#")[0].strip()
            code = code.replace(match["c"], container, 1)
            start = (number + 1, len(indent))
            out.append(Site(id=f"{file}:{number}:0:clear_list:{container}", file=file,
                            line=number + 1, col=len(indent), kind=STATEMENT, target=container,
                            code=code, start=start, end=start, depth=0, own_line=True,
                            indent=indent, fix=KIND_NAME, after=number))  # fmt: skip
    return out


KIND_NAME = "clear_list"


class ClearList(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and bool(appended(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        container = appended(found, ctx)
        files = list(dict.fromkeys(f[0] for f in (found.carry_producer, found.failing) if f))
        sites = [s for file in files for s in _emptying(container, file, ctx)]
        return [Candidate(1.5 + i, (s,)) for i, s in enumerate(sites)]  # after a detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        sibling = (site.file, site.after)
        return (
            f"Fix: `{site.code}` after {where(sibling, lines)}: `{site.target}` is emptied "
            "after each update like the container next to it, so the next update no longer "
            f"reads the entries appended at {where(found.carry_producer, lines)} before the "
            "backward call that freed their graph."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.target}`" for s in chosen)
        return [
            f"this changes what each update computes: it no longer includes the entries "
            f"{names} held from earlier updates (which the original paired with the new ones "
            "by position); the update uses only what was appended since the last one"
        ]

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return ""


KIND = ClearList()
