"""The loss computed again after an optimizer step, right before its backward call: a
loss whose graph ``torch.autograd.grad`` freed and another optimizer then stepped over.

Second-order DARTS computes ``loss_tr`` from the network, takes the architecture gradient
(``torch.autograd.grad(loss_tr, weights)`` inside, which frees the graph), steps the
architecture, then calls ``loss_tr.backward()`` for the weights: the graph is gone. The
message's advice, ``retain_graph=True``, then fails on the weights the architecture step
changed, and were it not to, the weights would train at the architecture before the step.
DARTS itself (``train_search.py``) computes the training loss again after the
architecture step. So do we: the statements of the backward call's block that make the
loss (the forward call and the criterion, as the loss reads them) are run again just
before it.

Offered for a second backward call through a graph a ``torch.autograd.grad`` call freed,
with an optimizer step in between, where the loss is made in the backward call's own
block before that step. Judged as a cut: K steps with finite losses, nothing the original
differentiated left without a gradient.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind, calls_before
from autoclone.oracle import Reference
from autoclone.parsed import parsed

KIND_NAME = "forward_again"
_BACKWARD = re.compile(r"^\s*(?P<loss>[A-Za-z_]\w*)\.backward\(")


def forward_again(found: Diagnosis, ctx: Context) -> Site | None:
    """The loss's statements, copied right before the failing backward call."""
    if found.failing is None:
        return None
    file, line = found.failing
    match = _BACKWARD.match(ctx.line(file, line))
    text = ctx.texts.get(file, "")
    try:
        held = holding(parsed(text), line) if match and text else None
    except SyntaxError:
        return None
    if match is None or held is None:
        return None
    block, back = held[1], held[2]
    made = _making(block[:back], match["loss"])
    steps = [i for i, s in enumerate(block[:back]) if _steps(s)]
    if not made or not steps or block.index(made[-1]) > steps[-1]:
        return None
    indent = " " * block[back].col_offset
    code = "\n".join(indent + (ast.get_source_segment(text, s) or ast.unparse(s)) for s in made)
    at = block[back].lineno
    return Site(id=f"{file}:{at}:0:{KIND_NAME}", file=file, line=at, col=len(indent),
                kind=STATEMENT, target=match["loss"], code="; ".join(ast.unparse(s) for s in made),
                start=(at, 0), end=(at, 0), depth=0, indent=indent, fix=KIND_NAME,
                rewrite=(TextEdit(at, 0, code + "\n"),))  # fmt: skip


def _making(block: Sequence[ast.stmt], loss: str) -> list[ast.Assign]:
    """The block's last assignments of ``loss`` and, transitively, of the names they read,
    in the block's order; empty unless one of them calls something (a forward pass)."""
    wanted, out = {loss}, []
    for stmt in reversed(block):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in wanted):
            continue  # fmt: skip
        wanted.discard(stmt.targets[0].id)
        wanted |= {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        out.append(stmt)
    calls = any(isinstance(n, ast.Call) for s in out for n in ast.walk(s.value))
    return out[::-1] if calls else []


def _steps(stmt: ast.stmt) -> bool:
    """``something.step()``: an optimizer stepping."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "step")  # fmt: skip


class ForwardAgain(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return (found.error_class == BACKWARD_TWICE and found.grad_call is not None
                and found.stepped and forward_again(found, ctx) is not None)  # fmt: skip

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = forward_again(found, ctx)
        return [Candidate(0.0, (site,))] if site is not None else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` again just before {where(found.failing, lines)}: the graph "
            f"of `{site.target}` was freed by torch.autograd.grad at "
            f"{where(found.grad_call, lines)}, and an optimizer stepped since; computed "
            "again after the step, the backward call differentiates the loss at the current "
            "parameters (retain_graph=True would differentiate the old graph, whose saved "
            "parameters the step changed in place)."
        )

    def rebased(self, reference: Reference, ctx: Context) -> Reference:
        """The failing call now differentiates a loss computed after the step: an earlier
        conflict's reference holds the old loss there, so only the calls before it stay."""
        return calls_before(reference, ctx)

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "this runs the forward pass once more per step: the second backward call "
            "differentiates a loss computed after the optimizer step, as DARTS's own search "
            "loop does"
        ]


KIND = ForwardAgain()
