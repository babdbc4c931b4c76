"""Numbers given to a custom Function's ``ctx.save_for_backward`` kept as ``ctx``
attributes instead, and read back from them in ``backward``.

``save_for_backward`` takes tensors only ("save_for_backward can only save variables, but
argument 2 is of type float"); PyTorch's docs say to keep anything else on ``ctx``. The
message names the first argument that is not a tensor; that one and every argument after
it move (a tensor moved with them is the same object, read back unchanged), and the
statement in ``backward`` that unpacks ``ctx.saved_tensors`` is split the same way. The
Function then computes exactly what its author wrote. Judged like a cut (the original
never got past the forward): K steps with finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.classify import CUSTOM_FUNCTION
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "function_numbers"
#: What ``ctx`` already has: a moved argument of one of these names would shadow it
_CTX_OWN = frozenset({"saved_tensors", "needs_input_grad", "save_for_backward", "mark_dirty",
                      "mark_non_differentiable", "set_materialize_grads", "saved_variables",
                      "to_save", "materialize_grads"})  # fmt: skip
_ARGUMENT = re.compile(r"save_for_backward can only save variables, but argument (\d+)")


def _unpacking(cls: ast.ClassDef, count: int) -> ast.Assign | None:
    """``a, b, c = ctx.saved_tensors`` in the class's ``backward``, with ``count`` names."""
    for fn in cls.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "backward"):
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and ast.unparse(node.value).endswith(".saved_tensors")
                    and isinstance(node.targets[0], ast.Tuple)
                    and len(node.targets[0].elts) == count
                    and node.lineno == node.end_lineno):  # fmt: skip
                return node
    return None


def _statement(line: int, indent: str, *codes: str) -> tuple[TextEdit, ...]:
    """Line ``line`` replaced by the statements ``codes`` at ``indent``."""
    text = "".join(f"{indent}{code}\n" for code in codes if code)
    return (TextEdit(line, 0, "", drop_line=True), TextEdit(line, 0, text))


def _applied(found: Diagnosis, ctx: Context) -> str | None:
    """The Function class the failing line applies (``LSQQuantizer.apply(...)``)."""
    if found.failing is None:
        return None
    file, line = found.failing
    text = ctx.texts.get(file, "")
    held = holding(parsed(text), line) if text else None
    if held is None:
        return None
    calls = [n.func.value for n in ast.walk(held[1][held[2]]) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "apply"]  # fmt: skip
    names = {ast.unparse(c).split(".")[-1] for c in calls}
    return names.pop() if len(names) == 1 else None


def _saves(cls: ast.ClassDef) -> list[tuple[ast.stmt, ast.Call]]:
    """The one-line ``ctx.save_for_backward(...)`` statements of the class's ``forward``."""
    out: list[tuple[ast.stmt, ast.Call]] = []
    for fn in cls.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "forward"):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Expr) or node.lineno != node.end_lineno:
                continue
            call = node.value
            if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("save_for_backward"):
                out.append((node, call))
    return out


def split(found: Diagnosis, ctx: Context) -> Site | None:
    """The save and its unpacking split at the argument the message names."""
    match = _ARGUMENT.search(found.message)
    name = _applied(found, ctx) if match is not None else None
    if match is None or name is None:
        return None
    for file, text in sorted(ctx.texts.items()):
        for cls in ast.walk(parsed(text)):
            if not (isinstance(cls, ast.ClassDef) and cls.name == name):
                continue
            saves = _saves(cls)
            if len(saves) != 1:
                return None
            save, call = saves[0]
            at, moved = int(match.group(1)), call.args[int(match.group(1)):]
            if not moved or not all(isinstance(a, ast.Name) and a.id not in _CTX_OWN
                                    for a in moved):  # fmt: skip
                return None
            unpack = _unpacking(cls, len(call.args))
            return None if unpack is None else _site(file, save, call, at, unpack)
    return None


def _site(file: str, save: ast.stmt, call: ast.Call, at: int, unpack: ast.Assign) -> Site:
    receiver = ast.unparse(call.func).rsplit(".", 1)[0]
    kept = ", ".join(ast.unparse(a) for a in call.args[:at])
    names = [ast.unparse(a) for a in call.args[at:]]
    attrs = ", ".join(f"{receiver}.{n}" for n in names)
    targets = unpack.targets[0].elts  # type: ignore[attr-defined]
    source = ast.unparse(unpack.value)
    reader = source.rsplit(".", 1)[0]
    read_kept = ", ".join(ast.unparse(t) for t in targets[:at])
    read_moved = ", ".join(ast.unparse(t) for t in targets[at:])
    edits = (
        *_statement(save.lineno, " " * save.col_offset, f"{ast.unparse(call.func)}({kept})",
                    f"{attrs} = {', '.join(names)}"),
        *_statement(unpack.lineno, " " * unpack.col_offset,
                    f"{read_kept}{',' if at == 1 else ''} = {source}" if at else "",
                    f"{read_moved} = {', '.join(f'{reader}.{n}' for n in names)}"),
    )  # fmt: skip
    return Site(id=f"{file}:{save.lineno}:0:{KIND_NAME}:{at}", file=file, line=save.lineno,
                col=save.col_offset, kind=STATEMENT, target=", ".join(names),
                code=f"{attrs} = {', '.join(names)}", start=(save.lineno, 0),
                end=(save.lineno, 0), depth=0, fix=KIND_NAME, rewrite=edits)  # fmt: skip


class FunctionNumbers(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class != CUSTOM_FUNCTION:
            return False
        try:
            return split(found, ctx) is not None
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = split(found, ctx)
        return [Candidate(0.0, (site,))] if site is not None else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.target}` kept as ctx attributes at {site.file}:{site.line} "
            f"(`{site.code}`) and read back from them in backward: save_for_backward takes "
            "tensors only, and PyTorch's docs keep anything else on ctx. The Function "
            "computes what it did."
        )


KIND = FunctionNumbers()
