"""``if x.requires_grad:`` over ``x.register_hook(...)`` where ``x`` was made where autograd
does not record, or is a frozen parameter ("cannot register a hook on a tensor that
doesn't require gradient").

A gradient hook runs when a gradient reaches its tensor; a tensor made under
``torch.no_grad()`` (a frozen encoder's features during a warm-up) gets none, so its hook
would never run. Registering it only where the tensor requires grad changes no value and
no gradient: the edit is neutral, and the hook still scales the gradient whenever the
tensor is differentiated (once the encoder is unfrozen). An error the guard then lets
the script reach (a loss with no graph under that same ``no_grad``) is the next conflict.
Judged like a cut (the original completed no backward call): K steps with finite
losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import HOOK_NO_GRAD
from autoclone.codemods.rewrites import statement_replaced
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "hook_guard"


def _hooked(stmt: ast.stmt) -> ast.expr | None:
    """``x`` of a statement ``x.register_hook(...)`` (its handle not kept), or of
    ``handles.append(x.register_hook(...))`` (kept in a list, to remove every hook later:
    a tensor that never gets a hook leaves no handle to remove). A handle bound to a name
    is not guarded: the name would be missing where the guard skips the call."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    func = call.func
    if func.attr == "append" and len(call.args) == 1 and not call.keywords:
        inner = call.args[0]
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
            func = inner.func
    receiver = func.value
    plain = isinstance(receiver, (ast.Name, ast.Attribute, ast.Subscript))
    return receiver if func.attr == "register_hook" and plain else None


def site(found: Diagnosis, ctx: Context) -> Site | None:
    """The guard around the failing line's ``register_hook`` statement."""
    if found.failing is None:
        return None
    file, line = found.failing
    text = ctx.texts.get(file, "")
    for stmt in ast.walk(parsed(text)) if text else ():
        if isinstance(stmt, ast.stmt) and stmt.lineno == line == stmt.end_lineno:
            receiver = _hooked(stmt)
            if receiver is not None:
                tensor = ast.unparse(receiver)
                call = ast.get_source_segment(text, stmt) or ast.unparse(stmt)
                code = f"if {tensor}.requires_grad:\n{' ' * stmt.col_offset}    {call}"
                return statement_replaced(file, stmt, code, KIND_NAME, KIND_NAME, tensor)
    return None


class HookGuard(Kind):
    name = KIND_NAME
    classes = (HOOK_NO_GRAD,)
    reference = NONE
    neutral = True

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return [s for s in (site(found, ctx),) if s is not None]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: the hook at {site.file}:{site.line} registered only where `{site.target}` "
            "requires grad: made where autograd does not record, or a frozen parameter, it "
            "gets no gradient, so its hook would never run; the guard changes no value and no "
            "gradient, and the hook still runs whenever the tensor is differentiated."
        )


KIND = HookGuard()
