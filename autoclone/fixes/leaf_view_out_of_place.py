"""``p = self.task_delta[t]; p += self.shared`` in a ``forward``: the write into a local view
of a parameter made out of place, ``p = p + self.shared``.

"a view of a leaf Variable that requires grad is being used in an in-place operation":
the forward takes a slice of a parameter to build a value it goes on to use (a task's soft
prompt as a shared prompt plus the task's offset) and adds into the slice. Written as
meant, the sum is a new tensor that both parameters train through; the in-place write
would instead add into the parameter itself on every forward. ``no_grad`` there would
make the write a silent update of the weight and cut the gradient of the value, so that
kind refuses a leaf written in a forward; this one offers only the out-of-place rewrite,
and only where the view is a local the function binds from a parameter's slice and reads
again after the write. The same holds for a parameter written through a conversion the
author took for a copy and read as a value (Gemma's ``scale = self.weight.float().add_(1.0)``:
``.float()`` copies a bf16 weight and returns an fp32 one itself): the chain is made out of
place where it is read, ``self.weight.float().add(1.0)``. Judged like ``no_grad``: the
failing step's forward values with grad disabled, then finite losses, and no tensor an
optimizer updates left without a gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import LEAF_INPLACE
from autoclone.codemods.sites import OUT_OF_PLACE, VALUE, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, written_in_forward
from autoclone.fixes.base import Candidate, Context, Kind, every_update_reached
from autoclone.oracle import Reference, judge
from autoclone.outcomes import Outcome
from autoclone.parsed import innermost
from autoclone.trial import RunResult

_VIEW_OF_LEAF = "a view of a leaf Variable"
_VIEWS = frozenset({"view", "narrow", "select", "chunk", "split", "unbind", "t", "transpose",
                    "view_as", "reshape", "flatten", "squeeze", "unsqueeze", "expand"})
#: Conversions that copy only for another dtype or device, and return the tensor itself
#: otherwise: an in-place call after one was written for a copy.
_CONVERSIONS = frozenset({"float", "double", "half", "bfloat16", "to", "type", "type_as",
                          "cpu", "cuda", "contiguous"})  # fmt: skip


def _sliced(value: ast.expr) -> bool:
    """``self.x[i]``, ``self.x.view(...)``, ``self.x.chunk(2)[0]``: a view of an attribute."""
    node = value
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _VIEWS:  # fmt: skip
            node = node.func.value
        else:
            break
    return node is not value and isinstance(node, ast.Attribute)


def _local_view(fn: ast.AST, name: str, line: int) -> bool:
    """``name`` is bound above ``line`` from a view of an attribute and read below it."""
    bound = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.lineno < line
             and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]  # fmt: skip
    last = max(bound, key=lambda n: n.lineno, default=None)
    read = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and n.lineno > line for n in ast.walk(fn))  # fmt: skip
    return last is not None and _sliced(last.value) and read


def _converted(code: str) -> bool:
    """``self.weight.float().add(1.0)``: the chain goes through a conversion on its way."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in _CONVERSIONS:
            return True
        node = node.func.value
    return False


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The out-of-place rewrite of the write, where it writes a local view of a parameter
    inside a module's forward, or a parameter through a conversion read as a value."""
    at = found.mutation or found.failing
    if at is None or not written_in_forward(found, ctx):
        return []
    here = [s for s in ctx.sites if (s.file, s.line) == at and s.fix == OUT_OF_PLACE]
    if _VIEW_OF_LEAF not in found.line:
        return [s for s in here if s.kind == VALUE and _converted(s.code)]
    text = ctx.texts.get(at[0], "")
    fn = innermost(text, at[1], FUNCTIONS) if text else None
    if fn is None:
        return []
    return [s for s in here if s.kind != VALUE and _local_view(fn, s.target, at[1])]


class LeafViewOutOfPlace(Kind):
    name = "leaf_view_out_of_place"
    classes = (LEAF_INPLACE,)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-0.5, (s,)) for s in sites(found, ctx)]

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        """The numbers, and every tensor an optimizer updates still given a gradient."""
        return every_update_reached(run, judge(run, reference, cut=bool(ctx.evidence.get("cut"))))

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.kind == VALUE:
            return (
                f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the chain "
                "reads a parameter through a conversion that returns the parameter itself "
                "when it already has that dtype and device, so the in-place call wrote into "
                "the parameter on every forward; out of place, the value read is the same and "
                "the parameter trains through it (no_grad would make the write a silent "
                "update of the weight)."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: `{site.target}` is "
            "a slice of a parameter the forward builds a value from; the sum goes into a new "
            "tensor that both parameters train through, where the in-place write would add "
            "into the parameter itself on every forward (no_grad would do that silently)."
        )


KIND = LeafViewOutOfPlace()
