"""A value an optimizer's closure reads, computed once outside it, moved into the closure.

``optimizer.step(closure)`` (L-BFGS, and any optimizer given one) calls the closure to
evaluate the loss, moves the parameters, and calls it again: the closure must compute the
loss from the parameters as they are then ("A closure that reevaluates the model and
returns the loss", PyTorch's documentation). ``scaled = head(logits)`` computed before the
closure is a graph of the first parameters only: the closure's first backward call frees
it and the second fails ("backward through the graph a second time"). The messages' cure,
``retain_graph=True``, runs, and every evaluation returns the first one's loss and gradient,
so L-BFGS never moves (a wrong patch no reference run of the program as written catches:
the reference keeps every graph, which is that patch).

Recognised from the tracer: the failing call was made inside an optimizer's step
(``Diagnosis.in_step``) and the carried graph was made, as the closure's file saw it, by
``NAME = expr`` in a function enclosing the closure, above its ``def``. The edit puts the
statement at the top of the closure's body and drops it outside where nothing else there
reads ``NAME``. Judged as a recomputation: the backward calls complete with finite
losses, nothing the original trained stops being reached, and the closure's first
evaluation (the calls the original completed) gives the original's loss and gradients.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, stored
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import innermost, parsed

KIND_NAME = "closure_recompute"
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _reads(nodes: Sequence[ast.AST], name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for node in nodes for n in ast.walk(node))  # fmt: skip


def _first_statement(fn: Function) -> ast.stmt:
    """The closure's first statement after its docstring (or the docstring alone)."""
    body = fn.body
    doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                        ast.Constant)  # fmt: skip
    return body[1] if doc and len(body) > 1 else body[0]


def _enclosing(text: str, closure: Function) -> Function | None:
    """The function whose body defines the closure (None: the module's top level)."""
    around = [n for n in ast.walk(parsed(text)) if isinstance(n, FUNCTIONS)
              and n.lineno < closure.lineno <= (n.end_lineno or n.lineno)]  # fmt: skip
    return max(around, key=lambda n: n.lineno, default=None)


def _stepped_with(tree: ast.AST, name: str) -> bool:
    """Some ``.step(...)`` call of the file takes the function ``name`` as its closure."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "step"
               and any(isinstance(a, ast.Name) and a.id == name
                       for a in [*n.args, *(k.value for k in n.keywords)])
               for n in ast.walk(tree))  # fmt: skip


def _in_scope(scope: ast.AST, stmt: ast.stmt) -> bool:
    """``stmt`` is one of the scope's own statements (not a nested function's)."""
    for node in getattr(scope, "body", []):
        if node is stmt:
            return True
        if not isinstance(node, (*FUNCTIONS, ast.ClassDef)) and any(
                n is stmt for n in ast.walk(node)):  # fmt: skip
            return True
    return False


def site(found: Diagnosis, ctx: Context) -> Site | None:
    """The move, or None where the graph was not made by a plain assignment above the
    closure, in the scope that defines it, or the function is no optimizer's closure."""
    failing = found.failing
    made = next((f for f in found.producer_frames if failing and f[0] == failing[0]), None)
    if not (found.in_step and made and failing):
        return None
    text = ctx.texts.get(made[0], "")
    closure = innermost(text, failing[1], FUNCTIONS) if text else None
    stmt = innermost(text, made[1], (ast.Assign,)) if text else None
    if not isinstance(closure, FUNCTIONS) or not isinstance(stmt, ast.Assign):
        return None
    target = stmt.targets[0]
    if len(stmt.targets) != 1 or not isinstance(target, ast.Name) or stmt.lineno != made[1]:
        return None
    outer = _enclosing(text, closure)
    end = stmt.end_lineno or stmt.lineno
    if (end >= closure.lineno or not _reads(closure.body, target.id)
            or target.id in stored(closure) or not _stepped_with(parsed(text), closure.name)
            or not _in_scope(outer or parsed(text), stmt)):  # fmt: skip
        return None
    return _move(made[0], text, stmt, closure, outer)


def _elsewhere(scope: ast.AST, stmt: ast.stmt, closure: Function, top_level: bool
               ) -> list[ast.AST]:  # fmt: skip
    """The scope's nodes that could read the statement's name, the closure's aside: those
    below the statement, and at the top level those above it too (a function defined
    there may run later)."""
    end = stmt.end_lineno or stmt.lineno
    inside = range(closure.lineno, (closure.end_lineno or closure.lineno) + 1)
    below = [n for n in ast.walk(scope) if getattr(n, "lineno", 0) > end
             and getattr(n, "lineno", 0) not in inside]  # fmt: skip
    above = [n for n in ast.walk(scope) if getattr(n, "lineno", end + 1) < stmt.lineno]
    return below + above if top_level else below


def _move(file: str, text: str, stmt: ast.Assign, closure: Function, outer: Function | None
          ) -> Site:  # fmt: skip
    lines, name = text.splitlines(), stmt.targets[0].id  # type: ignore[attr-defined]
    end = stmt.end_lineno or stmt.lineno
    first = _first_statement(closure)
    indent = " " * first.col_offset
    moved = [indent + line[stmt.col_offset:] for line in lines[stmt.lineno - 1:end]]
    edits = [TextEdit(first.lineno, 0, "\n".join(moved) + "\n")]
    scope = outer or parsed(text)
    if not _reads(_elsewhere(scope, stmt, closure, top_level=outer is None), name):
        # a blank line after it goes too where it opened the body (``def fit(self):``)
        blank = (scope.body[0] is stmt  # type: ignore[attr-defined]
                 and end < len(lines) and not lines[end].strip())  # fmt: skip
        edits += [TextEdit(n, 0, "", drop_line=True)
                  for n in range(stmt.lineno, end + 1 + blank)]  # fmt: skip
    value = ast.get_source_segment(text, stmt.value) or ""
    return Site(id=f"{file}:{stmt.lineno}:0:{KIND_NAME}:{name}", file=file, line=stmt.lineno,
                col=stmt.col_offset, kind=STATEMENT, target=name, code=f"{name} = {value}",
                start=(stmt.lineno, stmt.col_offset), end=(end, stmt.end_col_offset or 0),
                depth=0, fix=KIND_NAME, rewrite=tuple(edits), before=closure.lineno)  # fmt: skip


class ClosureRecompute(Kind):
    name = KIND_NAME
    classes = (BACKWARD_TWICE,)
    reference = NONE
    keeps_prefix = True

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        move = site(found, ctx)
        return [move] if move is not None else []

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-2.0, (s,)) for s in self.edits(found, ctx)]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` moved from {where((site.file, site.line), lines)} into the "
            f"closure at {where((site.file, site.before), lines)}: the optimizer calls the "
            "closure again after moving the parameters (L-BFGS evaluates the loss several "
            f"times per step), so `{site.target}` must be computed there, from the parameters "
            "as they are; made once outside, its graph was freed by the closure's first "
            "backward call, and kept with retain_graph=True every evaluation would return the "
            "first one's loss and gradient, so the optimizer would never move."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "the closure's first evaluation gives the loss and gradients the original's did "
            "(checked); each later one now sees the parameters the optimizer moved to"
        ]


KIND = ClosureRecompute()
