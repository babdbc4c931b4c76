"""torch.tensor(x) of a tensor with a graph made x.clone() or x.to(..., copy=True) where the
loss has no graph.

The run saw ``torch.tensor`` copy a tensor that had one (``autoclone.copies``):
``torch.tensor(scores, dtype=torch.float)`` becomes ``scores.to(dtype=torch.float,
copy=True)``, ``torch.tensor(scores)`` becomes ``scores.clone()``.

``torch.tensor`` reads the numbers of the tensor it is given into a new leaf (torch warns
"To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"):
a loss made from the copy is a constant, "element 0 of tensors does not require grad"
(PyKEEN's TransE loss, PR #65). The rewrite makes the same copy, of the same dtype and
device, with its graph. A call that also passes ``requires_grad`` means a new leaf and is
left alone. Judged like a cut (the original completed no backward call): K steps with
finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import call_rewritten
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "copy_construct"
_KEPT = ("dtype", "device")


def _copies(text: str, line: int) -> list[ast.Call]:
    """``torch.tensor(x, dtype=..., device=...)`` calls on ``line``, on one line each."""
    try:
        tree = parsed(text)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.lineno == line == node.end_lineno):
            continue
        func = node.func
        named = isinstance(func, ast.Attribute) and func.attr == "tensor" and getattr(
            func.value, "id", "") == "torch"  # fmt: skip
        if named and len(node.args) == 1 and all(k.arg in _KEPT for k in node.keywords):
            out.append(node)
    return out


def _site(file: str, text: str, call: ast.Call) -> Site:
    arg = ast.get_source_segment(text, call.args[0]) or ""
    if not isinstance(call.args[0], ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        arg = f"({arg})"
    keywords = ", ".join(ast.get_source_segment(text, k) or "" for k in call.keywords)
    new = f"{arg}.to({keywords}, copy=True)" if keywords else f"{arg}.clone()"
    return call_rewritten(file, text, call, new, KIND_NAME)


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """A rewrite of each copy on the lines where the run saw one, all at once."""
    out = []
    for file, line in found.copied:
        text = ctx.texts.get(file, "")
        out += [_site(file, text, call) for call in _copies(text, line)]
    return out


class CopyConstruct(Kind):
    name = KIND_NAME
    classes = (NO_GRAPH,)
    reference = NONE

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        chosen = sites(found, ctx)
        together = [Candidate(-1.0, tuple(chosen))] if len(chosen) > 1 else []
        return together + [Candidate(-0.9 + i / 100, (s,)) for i, s in enumerate(chosen)]

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.target}` as `{site.code}`: "
            "torch.tensor copies the numbers of a tensor into a new one without its graph, so "
            "the loss made from it was a constant; the rewrite makes the same copy with the "
            "graph."
        )


KIND = CopyConstruct()
