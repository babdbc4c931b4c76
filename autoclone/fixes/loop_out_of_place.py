"""A loop that writes each tensor of a list in place, made one out-of-place list:

    for h in layers:                          layers = [h.masked_fill(~mask, 0.0)
        h.masked_fill_(~mask, 0.0)      ->              for h in layers]
    for w, g in zip(fast, grads):             fast = [w.sub(lr * g) for w, g in zip(fast, grads)]
        w.sub_(lr * g)

Each tensor was saved for backward (a layer's output that the next layer read, a fast
weight that the inner step's graph used), and the write bumps its version. Rewriting the
statement out of place (``h = h.masked_fill(...)``) only rebinds the loop's name: the list
keeps the old tensors and the write is lost; a clone writes a copy and loses it too. The
list rebuilt from the new values keeps what the loop meant, as a new list (a tuple the
loop walked becomes a list). Offered where the write is the loop's only statement, on
the name the loop binds, and the list is a name (or the first of ``zip``'s, or
``enumerate``'s). Judged by the same numbers as every clone.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.codemods.rewrites import statement_replaced
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, LOOPS, innermost
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "loop_out_of_place"


def _listed(loop: ast.For) -> str:
    """The name of the list whose tensors the loop's only statement writes, or ""."""
    if len(loop.body) != 1 or not isinstance(loop.body[0], ast.Expr):
        return ""
    call = loop.body[0].value
    method = call.func if isinstance(call, ast.Call) else None
    if not isinstance(method, ast.Attribute) or not method.attr.endswith("_"):
        return ""
    written = method.value.id if isinstance(method.value, ast.Name) else ""
    names = [t.id if isinstance(t, ast.Name) else "" for t in getattr(loop.target, "elts", [])]
    if isinstance(loop.target, ast.Name):
        return loop.iter.id if loop.target.id == written and isinstance(loop.iter, ast.Name) else ""
    over = loop.iter
    if not written or written not in names or not isinstance(over, ast.Call):
        return ""
    kind = over.func.id if isinstance(over.func, ast.Name) else ""
    index = names.index(written) - (1 if kind == "enumerate" else 0)
    if kind not in ("zip", "enumerate") or not 0 <= index < len(over.args):
        return ""
    listed = over.args[index]
    return listed.id if isinstance(listed, ast.Name) else ""


def rebuilt(found: Diagnosis, ctx: Context) -> Site | None:
    """The loop around the line that wrote, rewritten as the list it means, or None."""
    if found.mutation is None:
        return None
    file, line = found.mutation
    text = ctx.texts.get(file, "")
    try:
        loop = innermost(text, line, LOOPS) if text else None
    except SyntaxError:
        return None
    if not isinstance(loop, ast.For) or loop.body[0].lineno != line:
        return None
    name = _listed(loop)
    if not name:
        return None
    call = loop.body[0].value  # type: ignore[attr-defined]
    value = ast.unparse(call).replace(f".{call.func.attr}(", f".{call.func.attr[:-1]}(", 1)
    target = loop.target
    bound = ", ".join(map(ast.unparse, target.elts)) if isinstance(target, ast.Tuple) else ""
    code = f"{name} = [{value} for {bound or ast.unparse(target)} in {ast.unparse(loop.iter)}]"
    return statement_replaced(file, loop, code, KIND_NAME, KIND_NAME, name)


def _loaded(nodes: list[ast.stmt], names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
               for stmt in nodes for n in ast.walk(stmt))  # fmt: skip


def rebound(found: Diagnosis, ctx: Context) -> Site | None:
    """The write out of place on the loop's name, where the loop reads the name after it
    and nothing after the loop reads what it walked; None elsewhere."""
    if found.mutation is None:
        return None
    file, line = found.mutation
    text = ctx.texts.get(file, "")
    loop = innermost(text, line, LOOPS) if text else None
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
        return None
    name, block = loop.target.id, loop.body
    index = next((i for i, s in enumerate(block) if s.lineno == line), -1)
    stmt = block[index] if index >= 0 else None
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    method = call.func if isinstance(call, ast.Call) else None
    if stmt is None or call is None or not (
            isinstance(method, ast.Attribute) and method.attr.endswith("_")
            and not method.attr.endswith("__") and isinstance(method.value, ast.Name)
            and method.value.id == name and _loaded(block[index + 1:], {name})):  # fmt: skip
        return None
    scope: ast.AST = innermost(text, line, FUNCTIONS) or parsed(text)
    walked = loop.iter
    while isinstance(walked, ast.Subscript):  # ``out.hidden_states[-2:]``: the tuple walked
        walked = walked.value
    key = ast.unparse(walked)
    end = loop.end_lineno or loop.lineno
    counted = {id(n.args[0]) for n in ast.walk(scope) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args}  # fmt: skip
    if any(isinstance(n, ast.Name | ast.Attribute) and ast.unparse(n) == key
           and getattr(n, "lineno", 0) > end and id(n) not in counted
           for n in ast.walk(scope)):  # fmt: skip
        return None  # ``len(maps)`` after the loop reads no value
    value = ast.unparse(call).replace(f".{method.attr}(", f".{method.attr[:-1]}(", 1)
    return statement_replaced(file, stmt, f"{name} = {value}", KIND_NAME, f"{KIND_NAME}:rebound",
                              name)  # fmt: skip


class LoopOutOfPlace(Kind):
    name = KIND_NAME

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return is_conflict(found) and (rebuilt(found, ctx) or rebound(found, ctx)) is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = rebuilt(found, ctx) or rebound(found, ctx)
        return [Candidate(-1.2, (site,))] if site is not None else []  # before a rewrite

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.id.endswith(":rebound"):
            return (
                f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the result "
                f"goes into a new tensor bound to the loop's `{site.target}`, which the loop "
                "reads next, so the tensor saved for backward keeps the values it had; "
                "nothing after the loop reads what it walked, and the numbers are the same."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: each tensor of "
            f"`{site.target}` is replaced by a new one with the written values, so the tensors "
            "saved for backward keep the versions they had; the numbers are the same. "
            "Rewriting the write alone out of place would only rebind the loop's name and "
            f"leave `{site.target}` unwritten."
        )


KIND = LoopOutOfPlace()
