"""``torch.set_grad_enabled(False)`` as a statement made ``with torch.no_grad():`` over the
rest of its block, where grad was still off when the loss found no graph.

An evaluation helper that switches grad off with ``torch.set_grad_enabled(False)`` and
never switches it back leaves the whole process without autograd: the next training
step's loss "does not require grad and does not have a grad_fn" (torchdiffeq's ODE demo
evaluated this way). The run shows it: grad mode was still off once the error had left
every ``with`` block. The block form disables grad for the same statements and restores
it after them, so the evaluation computes the same values and training records its graph
again. A trailing ``return`` stays outside the block. Judged like a cut (the original
never completed the step): K steps with finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.notebook import cell_starts
from autoclone.parsed import parsed

KIND_NAME = "grad_mode_block"


def _switch(stmt: ast.stmt) -> bool | None:
    """The flag of a statement ``torch.set_grad_enabled(<bool>)``, else None."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or ast.unparse(call.func) != "torch.set_grad_enabled":
        return None
    arg = call.args[0] if len(call.args) == 1 and not call.keywords else None
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, bool) else None


def _blocks(tree: ast.AST) -> list[list[ast.stmt]]:
    found = [getattr(n, f, None) for n in ast.walk(tree) for f in ("body", "orelse", "finalbody")]
    return [b for b in found if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _site(file: str, block: list[ast.stmt], at: int, cells: list[int]) -> Site | None:
    """The switch at ``block[at]`` as a ``with`` block over the statements after it, in
    its notebook cell (``cells``: where each begins) for a notebook's top level."""
    switch, rest = block[at], block[at + 1 :]
    cut = min((n for n in cells if n > switch.lineno), default=0)
    if cut:
        rest = [s for s in rest if (s.end_lineno or s.lineno) < cut]
    if rest and isinstance(rest[-1], ast.Return):
        rest = rest[:-1]
    if not rest or any(_switch(s) for s in rest):
        return None  # nothing to wrap, or the block turns grad back on itself
    indent = " " * switch.col_offset
    end = rest[-1].end_lineno or rest[-1].lineno
    code = "with torch.no_grad():"
    edits = (TextEdit(switch.lineno, 0, "", drop_line=True),
             TextEdit(switch.lineno, 0, f"{indent}{code}\n"),
             *(TextEdit(n, 0, "    ") for n in range(rest[0].lineno, end + 1)))  # fmt: skip
    return Site(id=f"{file}:{switch.lineno}:0:{KIND_NAME}", file=file, line=switch.lineno,
                col=switch.col_offset, kind=STATEMENT, target="torch.set_grad_enabled(False)",
                code=code, start=(switch.lineno, 0), end=(end, 0), depth=0, indent=indent,
                fix=KIND_NAME, rewrite=edits)  # fmt: skip


def sites(ctx: Context) -> list[Site]:
    """One site per ``torch.set_grad_enabled(False)`` statement of the user's files."""
    out = []
    for file, text in sorted(ctx.texts.items()):
        if "set_grad_enabled" not in text:
            continue
        cells = cell_starts(text)
        for block in _blocks(parsed(text)):
            for at, stmt in enumerate(block):
                site = _site(file, block, at, cells) if _switch(stmt) is False else None
                if site is not None:
                    out.append(site)
    return out


class GradModeBlock(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class != NO_GRAPH or not found.grad_off:
            return False
        try:
            return bool(sites(ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        each = sites(ctx)
        return ranked([[s] for s in each] + ([each] if len(each) > 1 else []), -1.0)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `torch.set_grad_enabled(False)` at {site.file}:{site.line} made "
            "`with torch.no_grad():` over the statements after it: the switch was never "
            "turned back, so every later step ran without autograd and its loss had no "
            "graph; the block disables grad for the same statements and restores it after "
            "them. No value changes."
        )


KIND = GradModeBlock()
