"""``x.requires_grad_(True)`` where ``x`` is made, for ``torch.autograd.grad(y, x)`` (or a
backward call followed by a read of ``x.grad``) on an ``x`` that never required grad.

A gradient penalty's interpolates, a PINN's collocation points, diffusion times: the
program asks autograd for the derivative with respect to a tensor it made itself, but
never flagged it, so the forward recorded no path from it ("One of the differentiated
Tensors does not require grad"). A gradient cache computes the loss on representations
encoded under ``no_grad``, calls ``loss.backward()`` and reads ``q_reps.grad``: the loss
has no graph at all ("element 0 of tensors does not require grad"), and the program asks
for exactly those gradients. Setting the flag right after the statement that binds
the tensor (or, for a function's argument, before the function's first statement) is
what the program means: a flag changes no value, the forward then records the path, and
the gradient asked for exists. Only a tensor the function computes or receives is
flagged, never an alias of a module's attribute (a frozen weight flagged would train).
Judged like a cut (the original never got past the call): the backward calls complete,
losses stay finite, every tensor the program trains still gets its gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import INPUT_NO_GRAD, NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, fresh_binding, holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import innermost, parsed

KIND_NAME = "requires_grad_input"


def _grad_inputs(stmt: ast.stmt) -> list[str]:
    """The plain names passed as ``inputs`` to the ``autograd.grad`` calls in ``stmt``."""
    names: list[str] = []
    for call in ast.walk(stmt):
        if not isinstance(call, ast.Call) or not ast.unparse(call.func).endswith("grad"):
            continue
        if ast.unparse(call.func).split(".")[-1] != "grad":
            continue
        given = [k.value for k in call.keywords if k.arg == "inputs"] or call.args[1:2]
        for expr in given:
            elts = expr.elts if isinstance(expr, ast.List | ast.Tuple) else [expr]
            names += [e.id for e in elts if isinstance(e, ast.Name)]
    return names


def _flag(file: str, at: int, indent: str, name: str, where: str = "made") -> Site:
    code = f"{name}.requires_grad_(True)"
    return Site(id=f"{file}:{at}:0:{KIND_NAME}:{name}:{where}", file=file, line=at, col=len(indent),
                kind=STATEMENT, target=name, code=code, start=(at, len(indent)),
                end=(at, len(indent)), depth=0, indent=indent, fix=KIND_NAME,
                rewrite=(TextEdit(at, 0, f"{indent}{code}\n"),))  # fmt: skip


def _site(file: str, fn: ast.AST | None, tree: ast.Module, name: str, line: int) -> Site | None:
    scope = fn if fn is not None else tree
    bound = fresh_binding(scope, name, line)
    if bound is not None and bound.end_lineno is not None:
        return _flag(file, bound.end_lineno + 1, " " * bound.col_offset, name)
    if not isinstance(fn, FUNCTIONS) or name not in {a.arg for a in fn.args.args}:
        return None
    body = fn.body
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(
        body[0].value, ast.Constant) else body[0]  # fmt: skip
    return _flag(file, first.lineno, " " * first.col_offset, name, "argument")


def _grads_read(fn: ast.AST | None, stmt: ast.stmt) -> list[str]:
    """The plain names whose ``.grad`` the function reads after ``stmt``, a backward call
    (GradCache's ``loss.backward()``, then ``q_reps.grad``)."""
    if not isinstance(fn, FUNCTIONS) or ".backward(" not in ast.unparse(stmt):
        return []
    after = stmt.end_lineno or stmt.lineno
    return [n.value.id for n in ast.walk(fn) if isinstance(n, ast.Attribute) and n.attr == "grad"
            and isinstance(n.value, ast.Name) and n.lineno > after]  # fmt: skip


def flags(found: Diagnosis, ctx: Context) -> tuple[Site, ...]:
    """One flag per differentiated name the failing statement passes (or, for a backward
    call with no graph, per name whose ``.grad`` the function reads after it), where it is
    made; none unless every such name has one."""
    if found.failing is None:
        return ()
    file, line = found.failing
    text = ctx.texts.get(file, "")
    tree = parsed(text) if text else None
    held = holding(tree, line) if tree is not None else None
    if tree is None or held is None:
        return ()
    fn = innermost(text, line, FUNCTIONS)
    stmt = held[1][held[2]]
    names = _grad_inputs(stmt) if found.error_class == INPUT_NO_GRAD else _grads_read(fn, stmt)
    sites = [_site(file, fn, tree, name, line) for name in dict.fromkeys(names)]
    return tuple(s for s in sites if s is not None) if names and all(sites) else ()


class RequiresGradInput(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class not in (INPUT_NO_GRAD, NO_GRAPH):
            return False
        try:
            return bool(flags(found, ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = flags(found, ctx)
        return [Candidate(0.0, sites)] if sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        made = "enters the function" if site.id.endswith(":argument") else "is made"
        return (
            f"Fix: `{site.code}` at {site.file}:{site.line}, where `{site.target}` {made}: "
            f"{where(found.failing, lines)} asks for the gradient with respect to "
            f"`{site.target}`, and autograd records a path from a tensor only if it requires "
            "grad before the computation that uses it. The flag changes no value."
        )


KIND = RequiresGradInput()
