"""``--set NAME=VALUE`` checked before any run: a bad value is the user's input error.

Without this check ``--set EPOCHS=abc`` became ``EPOCHS = abc`` in every trial, and the
repair reported the script's ``NameError`` as "not an autograd error". A constant that
holds a number must get a number, a flag ``True`` or ``False``; a constant that holds a
string takes the value as that string unless it is already a quoted literal (so
``--set DEVICE=cpu`` works); an argparse option with ``type=int`` or ``float`` or
literal ``choices`` must get a value that option accepts. Any other constant (``RESUME =
None``, ``BATCH = int(os.environ[...])``) takes only a Python literal, never an
expression: ``--set`` values are data, not code run in every trial.
"""

from __future__ import annotations

import ast
from typing import Any

_NUMBER_TYPES = {"int": int, "float": float}


def module_values(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level ``NAME = value`` (and ``NAME: T = value``) assignments."""
    out: dict[str, ast.expr | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node.value
    return out


def argparse_calls(tree: ast.AST) -> dict[str, ast.Call]:
    """``add_argument(...)`` calls by destination, computed as argparse does."""
    out = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            dest = _dest(node)
            if dest:
                out[dest] = node
    return out


def _dest(call: ast.Call) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "dest" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    longs = [n for n in names if n.startswith("--")] or names
    return longs[0].lstrip("-").replace("-", "_") if longs else None


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _current(old: ast.expr | None) -> Any:
    """The constant's present value when it is a plain literal (``-3`` too), else None."""
    if old is None:
        return None
    try:
        return ast.literal_eval(old)
    except (ValueError, SyntaxError, TypeError):
        return None


def constant_value(name: str, value: str, where: str, old: ast.expr | None) -> str:
    """The value to write in trials; ``ValueError`` (one line) when it cannot stand for
    what the constant holds."""
    current = _current(old)
    ok, new = _literal(value)
    if isinstance(current, bool):
        if not (ok and isinstance(new, bool)):
            raise ValueError(f"--set {name}={value}: {name} is True or False ({where})")
    elif isinstance(current, int | float):
        if not (ok and isinstance(new, int | float) and not isinstance(new, bool)):
            raise ValueError(f"--set {name}={value}: {name} is a number ({where}); give a number")
    elif isinstance(current, str) and not (ok and isinstance(new, str)):
        return repr(value)
    if not ok:  # a value is data: never pasted into the trials as code
        raise ValueError(
            f"--set {name}={value}: not a literal value ({name} is set at {where}); give a "
            f"number, True, False, None or a quoted string (--set {name}={value!r})"
        )
    return repr(new)


def check_option_value(name: str, value: str, call: ast.Call) -> None:
    """``ValueError`` when the option's own ``type`` or ``choices`` would refuse it."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    kind = keywords.get("type")
    converted: Any = value
    if isinstance(kind, ast.Name) and kind.id in _NUMBER_TYPES:
        try:
            converted = _NUMBER_TYPES[kind.id](value)
        except ValueError:
            raise ValueError(f"--set {name}={value}: the option takes {kind.id} values") from None
    choices = _current(keywords.get("choices"))
    if isinstance(choices, list | tuple | set) and converted not in choices:
        shown = ", ".join(map(str, choices))
        raise ValueError(f"--set {name}={value}: the option takes one of {shown}")
