"""``.detach()`` where a value is assigned whose split/chunk/unbind outputs are written in place
and then only serve as labels: ``boxes = self.decode(deltas).detach()`` before
``x1, y1, x2, y2 = boxes.unbind(-1); x1.clamp_(0, 1)``, where the clipped boxes give the IoU
target of a quality branch.

Autograd forbids writing into the outputs of a function that returns several views. The
edit the message suggests, the write made out of place, keeps every number of the failing
step, and lets gradient flow from the loss's labels into the model: it learns to move its
own targets (``autoclone.labels`` refuses that run). Detached where it is made, the value
is the constant the program uses it as, and the in-place writes act outside the graph.

Only offered once a run showed that the out-of-place writes reach a loss's labels
(``label_leaks`` in the evidence): where the value must train (a policy's clipped log-std),
the out-of-place write is right, and a detach would silently stop that training. Judged
like the in-place kinds: the failing step's values, computed with grad off, plus the label
check every run gets.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import MULTI_OUTPUT_VIEW
from autoclone.codemods.rewrites import as_detach
from autoclone.codemods.sites import ARG, ASSIGN, OPERAND, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.fixes.detach import scope_of

_VIEWS = frozenset({"unbind", "split", "chunk", "tensor_split", "split_with_sizes", "unflatten"})


def view_base(line: str) -> str:
    """The tensor the line splits into views (``boxes`` in ``a, b = boxes.unbind(-1)``,
    also ``torch.unbind(boxes, -1)``); '' when the line has none."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in _VIEWS:
            continue
        base = node.func.value
        if isinstance(base, ast.Name) and base.id == "torch" and node.args:
            return ast.unparse(node.args[0])
        return ast.unparse(base)
    return ""


def detach_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """Where the split value is assigned, latest first in the view's own function, then
    the split value itself on the view's line."""
    view = found.view
    if view is None:
        return []
    base = view_base(ctx.line(*view))
    if not base:
        return []
    text = ctx.texts.get(view[0], "")
    scope = scope_of(text, view[1])
    made = [s for s in ctx.sites if s.file == view[0] and s.kind == ASSIGN and s.line < view[1]
            and s.assigned == base and scope_of(text, s.line) == scope]  # fmt: skip
    read = [s for s in ctx.sites if (s.file, s.line) == view and s.kind in (ARG, OPERAND)
            and s.target == base]  # fmt: skip
    edits = [as_detach(s) for s in [*sorted(made, key=lambda s: -s.line)[:1], *read[:1]]]
    return [s for s in edits if s is not None]


class DetachView(Kind):
    name = "detach_view"

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == MULTI_OUTPUT_VIEW and found.view is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        if not ctx.evidence.get("label_leaks"):
            return []
        return [Candidate(-3.0 + i, (s,)) for i, s in enumerate(detach_sites(found, ctx))]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the views made at "
            f"{where(found.view, lines)} and written in place at "
            f"{where(found.mutation or found.failing, lines)} serve as labels: written out of "
            "place instead, gradient reached the labels of a loss. Detached where it is "
            "made, the value is the constant the program uses it as, and the writes act "
            "outside the graph."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            f"this changes what is differentiated: no gradient flows through "
            f"`{chosen[0].assigned or chosen[0].target}` any more; the edit the error message "
            "suggests (the write out of place) was tried and let gradient reach a loss's "
            "labels, which trains the model to move its own targets"
        ]


KIND = DetachView()
