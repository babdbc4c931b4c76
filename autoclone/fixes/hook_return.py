"""A module hook that writes its input or output in place, made to return the new value:
``x.add_(noise)`` in a ``forward_pre_hook`` -> ``x = x.add(noise)`` and ``return (x,)``;
``output[:, heads] = 0.0`` in a forward hook -> ``output = output.clone()`` before it and
``return output``.

PyTorch's hooks change what a module receives or gives by returning the replacement
(a pre-hook returns the new inputs, a forward hook the new output); an in-place write
instead changes a tensor autograd may have saved (the ReLU output a noise pre-hook on
the next Linear writes into). The plain out-of-place rewrite alone is a trap there: the
hook then computes its value and throws it away, so the noise silently stops. Returning
it gives the module the same values the in-place write gave, into a new tensor, so the
saved one stays intact: judged like a clone, by the numbers the script meant.

Recognised statically: the write's innermost function returns nothing and is passed to
``register_forward_pre_hook`` or ``register_forward_hook`` (by name, as an instance of
the class whose ``__call__`` it is, or as what a factory that defines it returns), and
the name written is the hook's output argument, or the first of its inputs taken as
``x = inputs[0]``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.codemods.render import patch_edits
from autoclone.codemods.sites import CLONE, INPLACE, OUT_OF_PLACE, STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, returns_value
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.parsed import innermost, project_trees

KIND_NAME = "hook_return"
#: The edits of the write a hook's return completes: made out of place, or (a write into
#: an index, ``output[:, heads] = 0.0``, which has no out-of-place form) a clone before it
_WRITES = frozenset({(OUT_OF_PLACE, STATEMENT), (CLONE, INPLACE)})
PRE, FORWARD = "register_forward_pre_hook", "register_forward_hook"


def _names_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module) -> set[str]:
    """What a registration can call the hook: its name; for ``__call__``, its class's
    name and every name bound to an instance of it; for a closure, its factory's name."""
    names = {fn.name}
    for owner in ast.walk(tree):
        body = getattr(owner, "body", None)
        if not isinstance(body, list) or fn not in body:
            continue
        if isinstance(owner, ast.ClassDef) and fn.name == "__call__":
            names = {owner.name}
        elif isinstance(owner, FUNCTIONS):
            names.add(owner.name)
    return names


def _registered_as(names: set[str], trees: Mapping[str, ast.Module]) -> str:
    """``register_forward_pre_hook`` or ``register_forward_hook`` where the project passes
    one of ``names`` (or an instance bound from one of them) to it; "" when it does not."""
    bound = set(names)
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                if ast.unparse(node.value.func).split(".")[-1] in names:
                    bound |= {ast.unparse(t).split(".")[-1] for t in node.targets}
    for tree in trees.values():
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
            if method not in (PRE, FORWARD) or not call.args:
                continue
            if any(k.arg == "with_kwargs" for k in call.keywords):
                continue
            hook = call.args[0]
            hook = hook.func if isinstance(hook, ast.Call) else hook
            if ast.unparse(hook).split(".")[-1] in bound:
                return method
    return ""


def _returned(fn: ast.FunctionDef | ast.AsyncFunctionDef, role: str, name: str) -> str:
    """What the hook returns so the module gets ``name`` (``{}`` stands for it): the output
    itself, or the inputs with it in first place; "" when ``name`` is neither."""
    params = [a.arg for a in fn.args.args if a.arg != "self"]
    if role == FORWARD and len(params) == 3 and name == params[2]:
        return "{}"
    if role != PRE or len(params) != 2:
        return ""
    first = f"{params[1]}[0]"
    taken = any(isinstance(s, ast.Assign) and len(s.targets) == 1
                and ast.unparse(s.targets[0]) == name and ast.unparse(s.value) == first
                for s in fn.body)  # fmt: skip
    return f"({{}}, *{params[1]}[1:])" if taken else ""


def hook_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The write made out of place and returned, when the write is a hook's."""
    write = found.mutation
    text = ctx.texts.get(write[0], "") if write else ""
    if not write or not text:
        return []
    trees = project_trees(ctx.texts)
    fn = innermost(text, write[1], FUNCTIONS)
    if not isinstance(fn, FUNCTIONS) or write[0] not in trees or returns_value(fn):
        return []
    if isinstance(fn.body[-1], ast.Return):
        return []
    role = _registered_as(_names_of(fn, trees[write[0]]), trees)
    writes = [s for s in ctx.sites if (s.file, s.line) == write and (s.fix, s.kind) in _WRITES]
    if any(s.fix == OUT_OF_PLACE for s in writes):  # the clone only where there is no rewrite
        writes = [s for s in writes if s.fix == OUT_OF_PLACE]
    out = []
    for site in writes:
        value = _returned(fn, role, site.target) if role else ""
        if value:
            out.append(_site(site, fn, ctx, value))
    return out


def _site(oop: Site, fn: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Context, value: str) -> Site:
    """The write returned where it stands when it is the function's last statement, on one
    line (``return (x.add(noise), *inputs[1:])``); else made out of place, and its name
    returned after the last statement."""
    last = fn.body[-1]
    end = last.end_lineno or last.lineno
    text = ctx.line(oop.file, end)
    prefix = f"{oop.target} = "
    whole = (last.lineno == end == oop.line and text.isascii() and oop.code.startswith(prefix)
             and oop.fix == OUT_OF_PLACE)  # fmt: skip
    if whole:
        code = "return " + value.format(oop.code[len(prefix) :])
        start, stop = last.col_offset, last.end_col_offset or len(text)
        edits: tuple[TextEdit, ...] = (TextEdit(end, start, code, delete=stop - start),)
    else:
        first = ctx.line(oop.file, fn.body[0].lineno)
        indent = first[: len(first) - len(first.lstrip())]
        returned = "return " + value.format(oop.target)
        code = f"{oop.code}; {returned}"
        edits = (*_written(oop), TextEdit(end, len(text), f"\n{indent}{returned}"))
    return Site(id=f"{oop.id}:{KIND_NAME}", file=oop.file, line=oop.line, col=oop.col,
                kind=STATEMENT, target=oop.target, code=code, start=oop.start, end=oop.end,
                depth=oop.depth, indent=oop.indent, fix=KIND_NAME, rewrite=edits)  # fmt: skip


def _written(site: Site) -> tuple[TextEdit, ...]:
    """The edits of the write itself: the out-of-place rewrite, or the clone before it."""
    return tuple(patch_edits([site]))


class HookReturn(Kind):
    name = KIND_NAME

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return is_conflict(found) and bool(hook_sites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-3.0, (s,)) for s in hook_sites(found, ctx)]  # before the write's own

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        saved = f" (saved at {where(found.saved, lines)})" if found.saved else ""
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: this function is "
            f"a module hook, and its in-place write changed `{site.target}`, a tensor autograd "
            f"had saved{saved}. A hook changes what the module gets by returning the new "
            "value: out of place and returned, the module computes with the same numbers and "
            "the saved tensor stays as it was (out of place alone, the hook's change would be "
            "thrown away)."
        )


KIND = HookReturn()
