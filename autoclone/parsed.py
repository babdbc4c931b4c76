"""The project's texts parsed once, and the innermost node around a line: every fix kind
and the diagnosis ask where a line sits (its loop, its function, the assignment on it)
many times a repair, for the same few files; each question parsed the whole file again.

The trees are shared: callers read them (``ast.walk``), never change them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import lru_cache


@lru_cache(maxsize=128)
def parsed(text: str) -> ast.Module:
    """``ast.parse(text)``, once per text (a SyntaxError is raised each time)."""
    return ast.parse(text)


def project_trees(texts: Mapping[str, str]) -> dict[str, ast.Module]:
    """Every file of the project that parses, by its relative path."""
    out = {}
    for file, text in texts.items():
        try:
            out[file] = parsed(text)
        except SyntaxError:
            continue
    return out


def innermost(source: str, line: int, kinds: tuple[type[ast.AST], ...]) -> ast.AST | None:
    """The innermost node of one of ``kinds`` whose lines contain ``line``."""
    best: ast.AST | None = None
    for node in ast.walk(parsed(source)):
        if isinstance(node, kinds):
            start, end = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
            if start <= line <= end and (best is None or start > best.lineno):  # type: ignore[attr-defined]
                best = node
    return best
