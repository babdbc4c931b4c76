"""``x = x.clone()`` before an in-place write into a local that a call made a leaf (an
embedding output flagged by a hook), so the write lands in a tensor of the graph.

With gradient checkpointing on a frozen language model, transformers'
``enable_input_require_grads`` hook calls ``output.requires_grad_(True)`` on the
embedding output: a leaf that requires grad. A multimodal model then writes its image
embeddings into it (``inputs_embeds[image_mask] = image_embeds``): "a leaf Variable that
requires grad is being used in an in-place operation". ``torch.no_grad()`` there runs but
cuts the projector off from the loss; a clone of the local first keeps every value and
every path (what ms-swift's and VILA's fixes do). Only a local bound in the same
function from a call's result, never an alias of a module's tensor (a weight written
through a clone would keep its old value). Judged by the failing step's forward values
with grad disabled, and every step before it, exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from autoclone.classify import LEAF_INPLACE
from autoclone.codemods.sites import CLONE, INPLACE, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, fresh_binding
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.parsed import innermost

KIND_NAME = "clone_leaf_local"


def local_clones(found: Diagnosis, ctx: Context) -> list[Site]:
    """The clone of the written name before the write, where its function binds it from
    a call's result above the write."""
    write = found.mutation or found.failing
    if found.error_class != LEAF_INPLACE or write is None:
        return []
    text = ctx.texts.get(write[0], "")
    fn = innermost(text, write[1], FUNCTIONS) if text else None
    if fn is None:
        return []
    here = [s for s in ctx.sites if (s.file, s.line) == write and s.fix == CLONE
            and s.kind == INPLACE and s.target.isidentifier()]  # fmt: skip
    return [replace(s, id=f"{s.id}:{KIND_NAME}", fix=KIND_NAME) for s in here
            if fresh_binding(fn, s.target, write[1]) is not None]  # fmt: skip


class CloneLeafLocal(Kind):
    name = KIND_NAME

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        try:
            return bool(local_clones(found, ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(1.0, (s,)) for s in local_clones(found, ctx)]  # after no_grad

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code.strip()}` before {where((site.file, site.line), lines)}: "
            f"`{site.target}` is a leaf that requires grad (a call's result flagged by a hook "
            "or by requires_grad_), which autograd cannot write in place; its clone is a "
            "tensor of the graph, takes the same values, and passes the written value's "
            "gradient on. torch.no_grad() there would cut the written value off from the loss."
        )


KIND = CloneLeafLocal()
