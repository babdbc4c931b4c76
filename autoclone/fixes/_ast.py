"""Where a line sits in its source: the innermost function or loop around it."""

from __future__ import annotations

import ast


def innermost(source: str, line: int, kinds: tuple[type[ast.AST], ...]) -> ast.AST | None:
    """The innermost node of one of ``kinds`` whose lines contain ``line``."""
    best: ast.AST | None = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, kinds):
            start, end = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
            if start <= line <= end and (best is None or start > best.lineno):  # type: ignore[attr-defined]
                best = node
    return best


def lines_of(node: ast.AST | None) -> tuple[int, int]:
    """``(first, last)`` line of a node; ``(0, 0)`` for none (the module)."""
    if node is None:
        return (0, 0)
    start = node.lineno  # type: ignore[attr-defined]
    return (start, node.end_lineno or start)  # type: ignore[attr-defined]


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def in_constructor(source: str, line: int) -> bool:
    """``line`` runs in an ``__init__``: a value made there from parameters is meant to
    train them, so a detach that makes them untrainable is never the repair."""
    try:
        node = innermost(source, line, FUNCTIONS)
    except SyntaxError:
        return False
    return isinstance(node, FUNCTIONS) and node.name == "__init__"
