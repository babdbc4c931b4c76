"""``self.untoggle_optimizer(opt)`` before a Lightning step toggles a second optimizer,
where the next loss had no graph.

``LightningModule.toggle_optimizer(opt)`` records every parameter's ``requires_grad``, turns
all of them off and turns on those of ``opt``; ``untoggle_optimizer(opt)`` restores the
record. A manual-optimization step that toggles the predictor's optimizer and then the
adversary's without the untoggle between them records the adversary's parameters as they
were left, frozen, and restores that: the adversary's loss "does not require grad and does
not have a grad_fn" (Lightning's own GAN examples pair each toggle with an untoggle). The
untoggle goes right before the next toggle, or after the last statement of the toggle's
block. Judged like a cut (the original never completed the failing backward call): K steps
with finite losses, and every tensor the program trains gets a gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked

KIND_NAME = "untoggle"
TOGGLE, UNTOGGLE = "toggle_optimizer", "untoggle_optimizer"


def _call_of(stmt: ast.stmt, method: str) -> ast.Call | None:
    """``x.method(arg)`` as a statement of its own."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    return call if call.func.attr == method and len(call.args) == 1 else None


def _unpaired(body: list[ast.stmt]) -> list[tuple[ast.Call, int]]:
    """Each toggle in ``body`` with no untoggle of its optimizer after it in ``body``, and
    the line the untoggle goes before (0: after the block's last statement)."""
    out = []
    for i, stmt in enumerate(body):
        call = _call_of(stmt, TOGGLE)
        if call is None:
            continue
        opt = ast.unparse(call.args[0])
        rest = body[i + 1 :]
        if any(ast.unparse(u.args[0]) == opt for s in rest if (u := _call_of(s, UNTOGGLE))):
            continue
        nxt = next((s.lineno for s in rest if _call_of(s, TOGGLE) is not None), 0)
        out.append((call, nxt))
    return out


def untoggles(ctx: Context) -> list[Site]:
    """A site per unpaired toggle in a function of the project's files."""
    sites = []
    for file, text in ctx.texts.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for fn in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS)):
            for block in _blocks(fn):
                for call, before in _unpaired(block):
                    sites.append(_site(file, ctx, call, before, block[-1]))
    return sites


def _blocks(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[ast.stmt]]:
    """The statement lists of ``fn`` itself (its body and the bodies of its compound
    statements), not of functions defined in it."""
    out, todo = [], [fn.body]
    while todo:
        body = todo.pop()
        out.append(body)
        for stmt in body:
            if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)):
                continue
            todo += [b for b in (getattr(stmt, f, None) for f in ("body", "orelse", "finalbody"))
                     if isinstance(b, list) and b]  # fmt: skip
    return out


def _site(file: str, ctx: Context, call: ast.Call, before: int, last: ast.stmt) -> Site:
    owner = ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else "self"
    code = f"{owner}.{UNTOGGLE}({ast.unparse(call.args[0])})"
    line_text = ctx.line(file, call.lineno)
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    if before:
        edit = TextEdit(before, 0, f"{indent}{code}\n")
        line = before
    else:
        end = last.end_lineno or last.lineno
        edit = TextEdit(end, len(ctx.line(file, end)), f"\n{indent}{code}")
        line = end
    return Site(id=f"{file}:{call.lineno}:0:{KIND_NAME}:{line}", file=file, line=line,
                col=len(indent), kind=STATEMENT, target=ast.unparse(call.args[0]), code=code,
                start=(line, 0), end=(line, 0), depth=0, indent=indent, fix=KIND_NAME,
                rewrite=(edit,))  # fmt: skip


class Untoggle(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == NO_GRAPH and bool(untoggles(ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked([[site] for site in untoggles(ctx)])

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: "
            f"`toggle_optimizer({site.target})` turned off `requires_grad` of every parameter "
            "outside that optimizer, and the next toggle recorded them as it found them, "
            "frozen, so the next loss had no graph. Untoggling restores them before the next "
            "optimizer is toggled."
        )


KIND = Untoggle()
