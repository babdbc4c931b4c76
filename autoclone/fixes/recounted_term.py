"""A backward call on a sum that holds the loss the previous call already backpropagated
made on the other terms only (``(loss + loss_adv).backward()`` after ``loss.backward()``
becomes ``loss_adv.backward()``).

Adversarial training (FGM, PGD on embeddings) backpropagates the clean loss to get the
perturbation's direction, then the adversarial loss; written as a second backward call on
``loss + loss_adv`` it runs into the clean loss's freed graph. With no ``zero_grad``
between the calls, ``.grad`` already holds the clean loss's gradient, so backpropagating
the other terms leaves it holding the gradient of the sum, each term counted once;
``retain_graph=True`` would count the clean loss twice. The sum itself is left as it is
for whatever reads it (a logged total). Judged like a cut: the backward calls the
original completed come out the same, K steps with finite losses, every tensor still
trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import replace

from autoclone.classify import BACKWARD_TWICE
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, char_col
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.oracle import Reference
from autoclone.parsed import innermost

KIND_NAME = "recounted_term"


def _terms(expr: ast.expr) -> list[ast.expr]:
    """The terms of a sum ``a + b + c`` (one term for anything else)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return [*_terms(expr.left), *_terms(expr.right)]
    return [expr]


def _receiver(stmt: ast.stmt) -> ast.expr | None:
    """``x`` of a statement ``x.backward(...)``."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        return call.func.value if call.func.attr == "backward" else None
    return None


def _statement(fn: ast.AST, line: int) -> ast.stmt | None:
    return next((s for s in ast.walk(fn) if isinstance(s, ast.stmt) and not isinstance(s, FUNCTIONS)
                 and s.lineno == line and (s.end_lineno or line) == line), None)  # fmt: skip


def _sum_of(fn: ast.AST, receiver: ast.expr, line: int) -> ast.expr:
    """The receiver, or the value last assigned to it above ``line`` when it is a name."""
    if not isinstance(receiver, ast.Name):
        return receiver
    assigned = [s for s in ast.walk(fn) if isinstance(s, ast.Assign) and s.lineno < line
                and [ast.unparse(t) for t in s.targets] == [receiver.id]]  # fmt: skip
    return max(assigned, key=lambda s: s.lineno).value if assigned else receiver


def site(found: Diagnosis, ctx: Context) -> Site | None:
    """The failing call made on the sum's other terms, where the previous call's loss is
    one of its terms and no ``zero_grad`` runs between the two calls."""
    first, failing = found.previous_backward, found.failing
    if not (found.recounts and first and failing and first[0] == failing[0]):
        return None
    text = ctx.texts.get(failing[0], "")
    fn = innermost(text, failing[1], FUNCTIONS) if text else None
    if fn is None or not fn.lineno <= first[1] < failing[1]:  # type: ignore[attr-defined]
        return None
    between = ctx.lines.get(failing[0], [])[first[1] : failing[1] - 1]
    stmts = (_statement(fn, first[1]), _statement(fn, failing[1]))
    if any("zero_grad" in line for line in between) or None in stmts:
        return None
    counted, receiver = (_receiver(s) for s in stmts)  # type: ignore[arg-type]
    if not isinstance(counted, ast.Name) or receiver is None:
        return None
    terms = _terms(_sum_of(fn, receiver, failing[1]))
    rest = [t for t in terms if not (isinstance(t, ast.Name) and t.id == counted.id)]
    if len(rest) != len(terms) - 1 or not rest:
        return None
    return _site(failing[0], ctx.line(*failing), failing[1], receiver, rest)


def _site(file: str, text: str, line: int, receiver: ast.expr, rest: list[ast.expr]) -> Site:
    """The receiver's text replaced by the other terms (its parentheses dropped when one
    plain term is left)."""
    col = char_col(text, receiver.col_offset)
    end = char_col(text, receiver.end_col_offset or 0)
    wrapped = text[col - 1 : col] == "(" and text[end : end + 1] == ")"
    plain = len(rest) == 1 and isinstance(rest[0], (ast.Name, ast.Attribute, ast.Call))
    new = " + ".join(ast.unparse(t) for t in rest)
    if wrapped and plain:
        col, end = col - 1, end + 1
    elif not wrapped and not plain:
        new = f"({new})"
    code = (text[:col] + new + text[end:]).strip()
    return Site(id=f"{file}:{line}:{col}:{KIND_NAME}", file=file, line=line, col=col,
                kind=STATEMENT, target=ast.unparse(receiver), code=code, start=(line, col),
                end=(line, col), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(line, col, new, delete=end - col),))  # fmt: skip


class RecountedTerm(Kind):
    name = KIND_NAME
    classes = (BACKWARD_TWICE,)
    reference = NONE
    keeps_prefix = True

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return [s for s in (site(found, ctx),) if s is not None]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` at {site.file}:{site.line}: `{site.target}` holds the loss "
            f"already backpropagated at {where(found.previous_backward, lines)}, with no "
            "zero_grad between, so its gradient is already in .grad; backpropagating the other "
            "terms leaves .grad holding the gradient of the sum, each term counted once "
            "(retain_graph=True would count that loss twice)."
        )

    def rebased(self, reference: Reference, ctx: Context) -> Reference:
        """The failing call now differentiates the sum less the previous call's loss: an
        earlier conflict's reference has the sum there, and the previous loss before it."""
        at = int(ctx.evidence.get("before", 0))
        losses = list(reference.losses)
        if not 0 < at < len(losses) or not all(
            isinstance(v, float) for v in losses[at - 1 : at + 1]
        ):
            return reference
        losses[at] -= losses[at - 1]
        return replace(reference, losses=tuple(losses))


KIND = RecountedTerm()
