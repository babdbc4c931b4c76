"""An optimizer step between a forward pass and its backward (a GAN's ``optD.step()``
before ``g_loss.backward()`` through a ``D(fake)`` made earlier): the step changed, in
place, weights that graph saved. The cure PyTorch's own DCGAN tutorial writes ("since we
just updated D, perform another forward pass"): run that forward pass again after the
step, and the statements that turn it into the failing loss, so the backward call goes
through a graph of the weights as they are now.

Two placements, from the tracer's record of where the graph saved the weights:
- the saving statement is in the step's block, before it: it and the statements the
  failing loss needs from it are repeated right after the step;
- it is before the loop that holds the step (a fake made once, then several generator
  steps): it is repeated at the top of that loop's body.

Judged like a detach (no reference numbers exist for a program that never ran), and more
strictly: the backward calls the original completed give the same numbers, and every
tensor it differentiated still gets a gradient. Without a placement, the refusal says what
a person does instead.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, optimizer_before_backward, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import LOOPS, holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "optimizer_step"
_BACKWARD = re.compile(r"^\s*(?P<loss>[A-Za-z_]\w*)\.backward\(")


def _names(node: ast.AST, ctx: type) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _needed(block: list[ast.stmt], first: int, last: int, loss: str) -> list[ast.stmt]:
    """Statements ``block[first:last]`` the loss needs, found backwards by the names bound."""
    needed, out = {loss}, list[ast.stmt]()
    for stmt in reversed(block[first:last]):
        if isinstance(stmt, ast.Assign) and _names(stmt, ast.Store) & needed:
            out.append(stmt)
            needed |= _names(stmt.value, ast.Load)
    return out[::-1]


def _site(
    file: str, text: str, stmts: Sequence[ast.stmt], at: int, indent: str, after: int
) -> Site:
    lines = text.splitlines()
    body = "".join(indent + lines[n - 1].strip() + "\n" for s in stmts
                   for n in range(s.lineno, (s.end_lineno or s.lineno) + 1))  # fmt: skip
    code = "; ".join(lines[s.lineno - 1].strip() for s in stmts)
    return Site(id=f"{file}:{at}:0:optimizer_step:{stmts[0].lineno}", file=file, line=at,
                col=len(indent), kind=STATEMENT, target=code, code=code, start=(at, 0),
                end=(at, 0), depth=0, fix=KIND_NAME, rewrite=(TextEdit(at, 0, body),),
                after=after)  # fmt: skip


def refreshed(found: Diagnosis, ctx: Context) -> list[Site]:
    """The forward pass that saved the weights, repeated where the step has run."""
    if found.mutation is None or found.failing is None or found.mutation[0] != found.failing[0]:
        return []
    file, step = found.mutation
    text = ctx.texts.get(file, "")
    loss = _BACKWARD.match(ctx.line(*found.failing))
    tree = parsed(text)
    held = holding(tree, step) if loss else None
    if held is None or loss is None:
        return []
    owner, block, index = held
    indent = " " * block[index].col_offset
    for _, line in (f for f in found.saved_frames if f[0] == file):
        saving = holding(tree, line)
        if saving is None:
            continue
        if saving[1] is block and saving[2] < index:  # same block, before the step
            stmts = _needed(block, saving[2], index, loss["loss"])
            if stmts:  # the loss's own forward pass, from the first statement that saved
                end = (block[index].end_lineno or step) + 1
                return [_site(file, text, stmts, end, indent, step)]
        elif isinstance(owner, LOOPS) and saving[1] is not block and line < owner.lineno:
            stmt = saving[1][saving[2]]
            if isinstance(stmt, ast.Assign):
                return [_site(file, text, [stmt], block[0].lineno, indent, owner.lineno)]
    return []


class OptimizerStep(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return optimizer_before_backward(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        try:
            return [Candidate(-1.0, (s,)) for s in refreshed(found, ctx)]
        except SyntaxError:
            return []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` again at {where((site.file, site.line), lines)}, after the "
            f"optimizer step at {where(found.mutation, lines)}: that step changed, in place, "
            f"the weights the earlier forward pass had saved for the backward call at "
            f"{where(found.failing, lines)}. Run again, the forward pass saves the weights as "
            "they are now, as PyTorch's DCGAN tutorial does after the discriminator's step."
        )

    def notes(self, found: Diagnosis, chosen: object, lines: Mapping[str, list[str]]) -> list[str]:
        return [
            "this changes what the second loss computes: it now sees the weights after the "
            "optimizer step, at the cost of one more forward pass (the canonical order); the "
            "other program people write runs that backward before the step instead, with the "
            "stepped optimizer's gradients zeroed in between, and trains differently"
        ]

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "an optimizer step changed weights that a graph of the same iteration still "
            "needed for backward; no edit autoclone can place here passed verification"
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        return (
            f"The optimizer step at {where(found.mutation, ctx.lines)} updated weights in "
            f"place that the graph backpropagated at {where(found.failing, ctx.lines)} had "
            f"saved earlier in the same iteration (at {where(found.saved, ctx.lines)}). A "
            "clone or detach at one place would only silence the error (a detach there would "
            "silently stop training through that graph). Cures people use: recompute that "
            "forward pass (for a GAN, `D(fake)`) after the step, or run this backward before "
            "the step."
        )


KIND = OptimizerStep()
