"""``x.requires_grad_()`` moved up to just before the first statement that reads ``x``: an
R1 penalty that sets ``real.requires_grad_(True)`` after ``d_real = D(real)`` and then asks
``torch.autograd.grad(d_real.sum(), real)``.

The forward ran while ``real`` did not require grad, so no graph leads from ``d_real`` back
to it ("The differentiated Tensor at index 0 appears to not have been used in the graph").
Setting the flag before that forward is what the program means: no value changes (a flag
never changes a number), the forward records the path from ``x``, and the gradient asked
for exists. ``allow_unused=True`` would only return ``None``. Judged like a cut (there are
no reference numbers: the original never got past the call): the backward calls complete,
losses stay finite, every tensor the program trains still gets its gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import UNUSED_INPUT
from autoclone.codemods.rewrites import statement_moved
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import holding, requires_grad_flag
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "requires_grad_earlier"


def _flagged(stmt: ast.stmt) -> str | None:
    """``x`` of ``x.requires_grad_()``, ``x.requires_grad_(True)``, ``x.requires_grad = True``."""
    flag = requires_grad_flag(stmt)
    return ast.unparse(flag[0]) if flag is not None and flag[1] else None


def _reads(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(n, ast.expr) and ast.unparse(n) == name for n in ast.walk(stmt)
               if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)))  # fmt: skip


def _binds(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name
               for n in ast.walk(stmt))  # fmt: skip


def moved(found: Diagnosis, ctx: Context) -> Site | None:
    """The flag's statement dropped and written again before the first statement of its
    block (after the last one binding the tensor) that reads the tensor; None where the
    flag is not an earlier statement of the failing call's block."""
    if found.failing is None:
        return None
    file, line = found.failing
    text = ctx.texts.get(file, "")
    held = holding(parsed(text), line) if text else None
    if held is None:
        return None
    _, block, failing = held
    for at in range(failing - 1, -1, -1):
        name = _flagged(block[at])
        if name is None or name not in ast.unparse(block[failing]):
            continue
        start = max((i + 1 for i in range(at) if _binds(block[i], name)), default=0)
        first = next((i for i in range(start, at) if _reads(block[i], name)), None)
        return None if first is None else _site(file, block[at], block[first], ctx)
    return None


def _site(file: str, flag: ast.stmt, before: ast.stmt, ctx: Context) -> Site | None:
    if flag.lineno != flag.end_lineno:
        return None
    code = ctx.line(file, flag.lineno).strip()
    return statement_moved(file, flag.lineno, code, before.lineno, " " * before.col_offset,
                           KIND_NAME)  # fmt: skip


class RequiresGradEarlier(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class != UNUSED_INPUT:
            return False
        try:
            return moved(found, ctx) is not None
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = moved(found, ctx)
        return [Candidate(0.0, (site,))] if site is not None else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` moved to just before {where((site.file, site.line), lines)}, "
            "the first statement that reads the tensor: the forward there ran while it did "
            f"not require grad, so {where(found.failing, lines)} found no graph back to it. "
            "The flag changes no value; set before the forward, the path is recorded and "
            "the gradient it asks for exists."
        )


KIND = RequiresGradEarlier()
