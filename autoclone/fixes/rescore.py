"""A second loss that reads a score made before another model's optimizer stepped, re-run
on the detached input right before it: ``d_z = self.disc(z1.detach())`` before FactorVAE's
discriminator loss, after the VAE's step (1Konny/FactorVAE#15).

The score ``d_z = self.disc(z1)`` was made for the first loss, whose optimizer then
stepped the encoder in place; the second loss trains only the discriminator, but its
backward call runs back through ``d_z`` into the encoder's saved weights. The
discriminator has not stepped, so scoring the same input again gives the same numbers,
and its detached input keeps the second backward call out of the stepped model. The
traps remove the error and train differently: ``d_z.detach()`` takes the real samples'
gradient away from the discriminator; the step moved after the second backward call lets
the discriminator's loss into the encoder's gradient.

Offered where the score is ``name = module(args)`` before the step, in the step's block,
and the stepping optimizer is built from another module's ``parameters()``. Judged by the
numbers the script meant (``allow_mutation_on_saved_tensors``), as a cut: the second call
may stop reaching the stepped model, and every optimizer it still reaches gets the
reference's gradients.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, optimizer_before_backward, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import step_block
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.oracle import Reference, judge
from autoclone.outcomes import Outcome
from autoclone.trial import RunResult

KIND_NAME = "rescore"
_BACKWARD = re.compile(r"^\s*(?P<loss>[A-Za-z_][\w.]*)\.backward\(")


def _last(expr: ast.expr) -> str:
    return ast.unparse(expr).split(".")[-1]


def _stepped_modules(tree: ast.Module, step: ast.stmt) -> set[str]:
    """The modules whose ``parameters()`` the stepping optimizer was built from (by their
    last name: ``vae`` for ``self.vae.parameters()``); empty when that is not known."""
    call = step.value if isinstance(step, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return set()
    optimizer = _last(call.func.value)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(_last(t) == optimizer for t in node.targets):
            out |= {_last(c.func.value) for c in ast.walk(node.value)
                    if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                    and c.func.attr == "parameters"}  # fmt: skip
    return out


def _scores(
    block: list[ast.stmt], step: int, loss: ast.stmt, stepped: set[str]
) -> list[ast.Assign]:
    """``name = module(args)`` before the step, read by the loss, of a module the step
    does not own."""
    read = {n.id for n in ast.walk(loss) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out = []
    for stmt in block[:step]:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in read
                and isinstance(stmt.value, ast.Call) and stmt.value.args
                and not stmt.value.keywords):  # fmt: skip
            continue
        func = stmt.value.func
        if isinstance(func, ast.Name | ast.Attribute) and _last(func) not in stepped:
            out.append(stmt)
    return out


def rescore_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The scores the failing loss reads, made again just before it, where the failing
    backward call and the optimizer step that wrote the saved weights share a block."""
    shared = step_block(found, ctx.texts)
    match = _BACKWARD.match(ctx.line(*found.failing)) if shared and found.failing else None
    if shared is None or match is None:
        return []
    file, tree, block, at, back = shared
    name = match["loss"].split(".")[-1]
    losses = [s for s in block[at + 1 : back]
              if any(_last(t) == name for t in getattr(s, "targets", ()))]  # fmt: skip
    stepped = _stepped_modules(tree, block[at])
    if not losses or not stepped:
        return []
    indent = " " * losses[-1].col_offset
    scores = _scores(block, at, losses[-1], stepped)
    return [_site(file, s, losses[-1].lineno, indent) for s in scores]


def _site(file: str, score: ast.Assign, at: int, indent: str) -> Site:
    call = score.value
    assert isinstance(call, ast.Call)
    args = ", ".join(f"{ast.unparse(a)}.detach()" if isinstance(a, ast.Name | ast.Attribute)
                     else ast.unparse(a) for a in call.args)  # fmt: skip
    name = ast.unparse(score.targets[0])
    code = f"{name} = {ast.unparse(call.func)}({args})"
    return Site(id=f"{file}:{at}:0:{KIND_NAME}:{score.lineno}", file=file, line=at,
                col=len(indent), kind=STATEMENT, target=name, code=code, start=(at, 0),
                end=(at, 0), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(at, 0, f"{indent}{code}\n"),))  # fmt: skip


class Rescore(Kind):
    name = KIND_NAME

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return optimizer_before_backward(found) and bool(rescore_sites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = rescore_sites(found, ctx)
        together = [Candidate(len(sites), tuple(sites))] if len(sites) > 1 else []
        return [Candidate(float(i), (s,)) for i, s in enumerate(sites)] + together

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        """The reference's numbers, as a cut: the call may stop reaching the stepped
        model's optimizer, and each optimizer it still reaches gets the same gradients."""
        return judge(run, reference, cut=True)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        made = (site.file, int(site.id.rsplit(":", 1)[1]))  # the id ends with the score's line
        return (
            f"Fix: `{site.code}` just before {where((site.file, site.line), lines)}: "
            f"`{site.target}` was made at {where(made, lines)} before the "
            f"optimizer step at {where(found.mutation, lines)} changed, in place, weights its "
            "graph had saved. That model has not stepped, so scored again on the detached "
            "input it gives the same numbers, and this backward call no longer runs into the "
            f"stepped model (`{site.target}.detach()` would instead stop training on it)."
        )


KIND = Rescore()
