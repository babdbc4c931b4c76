"""``use_reentrant=False`` in checkpoint calls where the loss has no graph, or where
``torch.autograd.grad`` is refused.

The loss has no graph with LoRA or adapters on a frozen model and activation
checkpointing; the reentrant checkpoint refuses ``torch.autograd.grad`` in a gradient
penalty through checkpointed blocks (a WGAN-GP critic). ``use_reentrant=True`` becomes
``False``, and a ``torch.utils.checkpoint`` call that does not pass the flag (reentrant:
torch warns, and keeps the old default) gets ``use_reentrant=False``.

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

import ast
import re
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH, REENTRANT_GRAD
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import keyword_appended
from autoclone.fixes.base import NONE, Candidate, Context, Kind

KIND_NAME = "checkpoint_nonreentrant"
_REENTRANT = re.compile(r"\bcheckpoint\w*\(.*\buse_reentrant\s*=\s*(True)\b")
_CALLS = ("checkpoint", "checkpoint_sequential")


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
    return sites + [site for file, text in ctx.texts.items() for site in _unset(file, text)]


def _unset(file: str, text: str) -> list[Site]:
    """``, use_reentrant=False`` at the end of each ``torch.utils.checkpoint`` call that
    does not pass the flag, in a file that imports that module."""
    if "torch.utils.checkpoint" not in text and "utils import checkpoint" not in text:
        return []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    sites = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _checkpoint_call(call.func)):
            continue
        if not any(k.arg in ("use_reentrant", None) for k in call.keywords):
            sites.append(keyword_appended(file, text, call, "use_reentrant", "False", KIND_NAME))
    return sites


def _checkpoint_call(func: ast.expr) -> bool:
    """``checkpoint(...)``, ``checkpoint_sequential(...)``, ``...checkpoint.checkpoint(...)``."""
    if isinstance(func, ast.Name):
        return func.id in _CALLS
    return isinstance(func, ast.Attribute) and func.attr in _CALLS \
        and ast.unparse(func.value).endswith("checkpoint")  # fmt: skip


class CheckpointNonReentrant(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class in (NO_GRAPH, REENTRANT_GRAD) and bool(switched(ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = switched(ctx)
        return [Candidate(0.0, tuple(sites))] if sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if found.error_class == REENTRANT_GRAD:
            return (
                f"Fix at {where((site.file, site.line), lines)}: `use_reentrant=False`: "
                "the reentrant checkpoint recomputes its block in a backward call of its "
                "own, which only accumulates into .grad and cannot return a gradient to "
                "torch.autograd.grad; the non-reentrant checkpoint recomputes the block "
                "inside the caller's backward, so the derivative goes through it. The "
                "forward values are the same."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `use_reentrant=False`: the "
            "reentrant checkpoint gives its output a graph only when one of its inputs "
            "requires grad, and the hidden states of a frozen model do not, so the "
            "parameters that train inside the block were cut off and the loss had no graph. "
            "The non-reentrant checkpoint records them; the forward values are the same."
        )


KIND = CheckpointNonReentrant()
