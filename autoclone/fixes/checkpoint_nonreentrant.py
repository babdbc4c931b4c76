"""``checkpoint(block, x, use_reentrant=True)`` -> ``use_reentrant=False`` where the loss
has no graph at all: LoRA or adapters on a frozen model, with activation checkpointing.

The reentrant implementation runs the block under ``no_grad`` and gives its output a
graph only when one of its tensor inputs requires grad. Where the base model is frozen,
the hidden states entering each block do not, so the parameters that train inside the
block (the LoRA matrices) are cut off, and the loss ends up with no graph ("element 0 of
tensors does not require grad and does not have a grad_fn"). The non-reentrant
implementation records the block's parameters whatever its inputs; the forward values
are the same. Every such call in the project is switched in one edit set. Judged like a
cut (the original never completed a backward call): K steps with finite losses, and every
tensor the program trains gets a gradient.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes.base import NONE, Candidate, Context, Kind

KIND_NAME = "checkpoint_nonreentrant"
_REENTRANT = re.compile(r"\bcheckpoint\w*\(.*\buse_reentrant\s*=\s*(True)\b")


def switched(ctx: Context) -> list[Site]:
    """``use_reentrant=False`` for each checkpoint call written on one line with
    ``use_reentrant=True``, in every file of the project."""
    sites = []
    for file, lines in ctx.lines.items():
        for number, text in enumerate(lines, start=1):
            match = _REENTRANT.search(text)
            if match is None or text.lstrip().startswith("#"):
                continue
            col = match.start(1)
            code = (text[:col] + "False" + text[match.end(1):]).strip()
            edit = TextEdit(number, col, "False", delete=4)
            sites.append(Site(id=f"{file}:{number}:{col}:{KIND_NAME}", file=file,
                              line=number, col=col, kind=STATEMENT, target="use_reentrant",
                              code=code, start=(number, col), end=(number, col + 4), depth=0,
                              fix=KIND_NAME, rewrite=(edit,)))  # fmt: skip
    return sites


class CheckpointNonReentrant(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == NO_GRAPH and bool(switched(ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = switched(ctx)
        return [Candidate(0.0, tuple(sites))] if sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `use_reentrant=False`: the "
            "reentrant checkpoint gives its output a graph only when one of its inputs "
            "requires grad, and the hidden states of a frozen model do not, so the "
            "parameters that train inside the block were cut off and the loss had no graph. "
            "The non-reentrant checkpoint records them; the forward values are the same."
        )


KIND = CheckpointNonReentrant()
