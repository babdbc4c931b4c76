"""``--set NAME=VALUE``: change a module-level constant for trials, never in the patch.

The value replaces the right-hand side in the trial copy only; the replacement keeps the
statement's line count so trial tracebacks still point at the user's lines.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst


def module_constants(source: str) -> set[str]:
    """Names assigned at module level (``EPOCHS = 100``)."""
    module = cst.parse_module(source)
    names = set()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign | cst.AnnAssign):
                    targets = small.targets if isinstance(small, cst.Assign) else [small]
                    for target in targets:
                        if isinstance(target.target, cst.Name):
                            names.add(target.target.value)
    return names


def argparse_options(source: str) -> set[str]:
    """Destinations of ``add_argument("--name", ...)`` calls, as argparse computes them."""
    names = set()
    for node in _walk(cst.parse_module(source)):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "add_argument":
                dest = option_dest(node)
                if dest:
                    names.add(dest)
    return names


def option_dest(call: cst.Call) -> str | None:
    """The destination of an ``add_argument(...)`` call, as argparse computes it."""
    for arg in call.args:
        if arg.keyword and arg.keyword.value == "dest" and isinstance(arg.value, cst.SimpleString):
            return str(arg.value.evaluated_value)
    options = [
        str(a.value.evaluated_value)
        for a in call.args
        if a.keyword is None and isinstance(a.value, cst.SimpleString)
    ]
    longs = [o for o in options if o.startswith("--")] or options
    return longs[0].lstrip("-").replace("-", "_") if longs else None


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    out = [node]
    for child in node.children:
        out.extend(_walk(child))
    return out


class _Replace(cst.CSTTransformer):
    def __init__(self, overrides: Mapping[str, str]) -> None:
        super().__init__()
        self.overrides = overrides
        self.depth = 0

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return False  # module level only

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        names = [t.target.value for t in updated.targets if isinstance(t.target, cst.Name)]
        for name in names:
            if name in self.overrides:
                return updated.with_changes(value=_value(self.overrides[name], original.value))
        return updated


def _value(raw: str, old: cst.BaseExpression) -> cst.BaseExpression:
    """The new value, padded with blank lines inside parentheses to keep the line count."""
    old_lines = cst.Module(body=[]).code_for_node(old).count("\n")
    try:
        expr = cst.parse_expression(raw)
    except cst.ParserSyntaxError:
        expr = cst.SimpleString(repr(raw))
    if not old_lines:
        return expr
    pad = cst.ParenthesizedWhitespace(
        empty_lines=[cst.EmptyLine()] * (old_lines - 1),
        indent=False,
        last_line=cst.SimpleWhitespace(""),
    )
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen(whitespace_before=pad)])


def apply_overrides(source: str, overrides: Mapping[str, str]) -> str:
    """``source`` with the named module-level constants replaced."""
    if not overrides:
        return source
    return cst.parse_module(source).visit(_Replace(overrides)).code
