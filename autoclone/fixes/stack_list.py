"""``torch.tensor(losses)`` made ``torch.stack(losses).flatten()`` where the loss has no
graph: a list of tensors copied into a new tensor without their history.

``torch.tensor`` (and ``torch.Tensor``, ``torch.FloatTensor``, ``torch.as_tensor``) reads
the numbers of a list of one-element tensors and makes a new leaf: a weighted sum of task
losses built on it is a constant ("element 0 of tensors does not require grad").
``torch.stack`` makes the same numbers with each element's graph, and ``.flatten()`` the
same shape as ``torch.tensor`` gave for one-element tensors of any shape. Tried for the
calls in the function that called backward and in the user's functions its stack ran
through; a list of plain numbers (a config's weights) makes ``torch.stack`` fail, and
that edit is rejected by its run. Judged like a cut (the original completed no backward
call): K steps with finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis
from autoclone.fixes._ast import FUNCTIONS, call_rewritten
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.parsed import innermost

KIND_NAME = "stack_list"
_COPIES = ("tensor", "Tensor", "FloatTensor", "as_tensor")


def _copy(node: ast.AST) -> ast.Call | None:
    """``torch.tensor(x)`` with one argument that is a name or a list (no dtype, no device:
    those say the call means numbers)."""
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return None
    func = node.func
    if not isinstance(func, ast.Attribute) or getattr(func.value, "id", "") != "torch":
        return None
    listed = isinstance(node.args[0], (ast.Name, ast.List, ast.ListComp))
    return node if func.attr in _COPIES and listed else None


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """A rewrite per copy call in the failing function, names before lists."""
    if found.failing is None:
        return []
    file, line = found.failing
    text = ctx.texts.get(file, "")
    fn = innermost(text, line, FUNCTIONS) if text else None
    if fn is None:
        return []
    calls = [c for c in map(_copy, ast.walk(fn)) if c is not None]
    calls.sort(key=lambda c: (not isinstance(c.args[0], ast.Name), c.lineno))
    return [_site(file, text, c) for c in calls if c.lineno == c.end_lineno]


def _site(file: str, text: str, call: ast.Call) -> Site:
    arg = ast.get_source_segment(text, call.args[0]) or ""
    return call_rewritten(file, text, call, f"torch.stack({arg}).flatten()", KIND_NAME)


class StackList(Kind):
    name = KIND_NAME
    classes = (NO_GRAPH,)
    reference = NONE

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.target}` as `{site.code}` at {site.file}:{site.line}: torch.tensor "
            "copies the numbers of a list of tensors into a new tensor without their graph, so "
            "the loss made from it was a constant; torch.stack keeps each element's graph "
            "(flattened to the shape torch.tensor gave)."
        )


KIND = StackList()
