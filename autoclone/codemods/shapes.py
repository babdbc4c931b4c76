"""The shapes of assignment targets and expressions the site finder reads (LibCST): what
an in-place write lands in, which names a target binds, and an expression's range widened
to its own parentheses. Split out of ``autoclone.codemods.sites`` to keep it short."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import Scope

Position = tuple[int, int]


def names_in(target: cst.BaseExpression) -> list[str]:
    """Names an assignment target binds: ``out, (h, c)`` -> out, h, c; an attribute of a
    name counts as one (``self.running``: a state a module carries across iterations)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, cst.Attribute):
        base = names_in(target.value) if isinstance(target.value, cst.Name | cst.Attribute) else []
        return [f"{base[0]}.{target.attr.value}"] if base else []
    if isinstance(target, cst.Tuple | cst.List):
        return [n for element in target.elements for n in names_in(element.value)]
    return []


def keyed_entry(node: cst.BaseExpression) -> bool:
    """``memory["M"]``, ``self.cache["h1"]``: an entry of a mapping (no tensor is indexed
    by a string), which an assignment rebinds as it does a variable."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    return (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)
            and base_of(node.value) is not None)  # fmt: skip


def base_of(target: cst.BaseExpression) -> cst.BaseExpression | None:
    """The variable whose tensor an in-place write lands in: ``x`` of ``x[i][j]``, or the
    mapping's entry ``memory["M"]`` of ``memory["M"][i]``."""
    while isinstance(target, cst.Subscript):
        if keyed_entry(target):
            return target
        target = target.value
    if isinstance(target, cst.Name):
        return target
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name | cst.Attribute):
        return target if base_of(target.value) is not None else None
    return None


def assigned_in(scope: Scope, name: str) -> bool:
    if name not in scope:
        return False
    return any(assignment.scope is scope for assignment in scope.assignments[name])


def outside_parens(
    lines: Sequence[str], start: Position, end: Position, count: int
) -> tuple[Position, Position]:
    """Widen an expression's range to include its own ``count`` pairs of parentheses."""
    line, col = start
    for _ in range(count):
        line, col = _step_back_to(lines, line, col, "(")
    new_start = (line, col)
    line, col = end
    for _ in range(count):
        line, col = _step_forward_past(lines, line, col, ")")
    return new_start, (line, col)


def _step_back_to(lines: Sequence[str], line: int, col: int, char: str) -> Position:
    while True:
        text = lines[line - 1]
        idx = text.rfind(char, 0, col)
        if idx >= 0:
            return line, idx
        line -= 1
        col = len(lines[line - 1])


def _step_forward_past(lines: Sequence[str], line: int, col: int, char: str) -> Position:
    while True:
        idx = lines[line - 1].find(char, col)
        if idx >= 0:
            return line, idx + 1
        line, col = line + 1, 0
