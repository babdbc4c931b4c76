"""``return dict(self._features)`` for a method that returns a container its object
refills on every call (a feature extractor's hook dict), where the loss has no graph.

Forward hooks that store activations in ``self._features`` and a ``forward`` that clears
the dict, runs the network and returns it hand every caller the same dict. A perceptual
loss that extracts the prediction's features and then the target's under ``no_grad``
finds its first result refilled by the second call: both are the target's features, the
loss has no graph ("element 0 of tensors does not require grad"). A copy gives each caller
what its own call stored. Offered only for a container the class itself empties or
fills in place; judged like a cut (the original completed no backward call): K steps with
finite losses, every tensor the program trains gets a gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, char_col
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "return_copy"
_EMPTY = {"dict": "dict", "list": "list", "OrderedDict": "dict"}
_FILLS = ("clear", "update", "append", "extend", "setdefault", "pop", "insert")


def _self_attr(node: ast.AST) -> str:
    """``attr`` of ``self.attr``, else ""."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else ""
    return ""


def _containers(cls: ast.ClassDef) -> dict[str, str]:
    """The ``self.<attr>`` the class starts as an empty dict or list: attr -> copy call."""
    out: dict[str, str] = {}
    for node in ast.walk(cls):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        attr, value = _self_attr(node.targets[0]), node.value
        if isinstance(value, ast.Dict) and not value.keys:
            out[attr] = "dict"
        elif isinstance(value, ast.List) and not value.elts:
            out[attr] = "list"
        elif isinstance(value, ast.Call) and not value.args and not value.keywords:
            name = getattr(value.func, "id", getattr(value.func, "attr", ""))
            if name in _EMPTY:
                out[attr] = _EMPTY[name]
    out.pop("", None)
    return out


def _refilled(cls: ast.ClassDef) -> set[str]:
    """The ``self.<attr>`` the class empties or fills in place (``.clear()``,
    ``self.<attr>[k] = v``, ``.append(...)``), in any method or nested hook."""
    out = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _FILLS:
                out.add(_self_attr(node.func.value))
        elif isinstance(node, ast.Assign):
            out |= {_self_attr(t.value) for t in node.targets if isinstance(t, ast.Subscript)}
    return out - {""}


def _returns(cls: ast.ClassDef, attrs: set[str]) -> Iterator[ast.Return]:
    """``return self.<attr>`` in the class's methods (not its constructor)."""
    for fn in cls.body:
        if isinstance(fn, FUNCTIONS) and fn.name != "__init__":
            for node in ast.walk(fn):
                if isinstance(node, ast.Return) and node.value is not None \
                        and _self_attr(node.value) in attrs:
                    yield node


def sites(ctx: Context) -> list[Site]:
    """A copy for every ``return self.<attr>`` of a container its class refills."""
    out: list[Site] = []
    for file, text in sorted(ctx.texts.items()):
        for cls in ast.walk(parsed(text)):
            if not isinstance(cls, ast.ClassDef):
                continue
            kinds = _containers(cls)
            refilled = set(kinds) & _refilled(cls)
            out += [_site(file, text, ret, kinds) for ret in _returns(cls, refilled)]
    return out


def _site(file: str, text: str, ret: ast.Return, kinds: Mapping[str, str]) -> Site:
    value = ret.value
    assert isinstance(value, ast.Attribute)
    line = text.splitlines()[value.lineno - 1]
    col, end = char_col(line, value.col_offset), char_col(line, value.end_col_offset or 0)
    copy = kinds[value.attr]
    code = f"return {copy}(self.{value.attr})"
    return Site(id=f"{file}:{value.lineno}:{col}:{KIND_NAME}", file=file, line=value.lineno,
                col=col, kind=STATEMENT, target=f"self.{value.attr}", code=code,
                start=(value.lineno, col), end=(value.lineno, end), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(value.lineno, col, f"{copy}("),
                         TextEdit(value.lineno, end, ")")))  # fmt: skip


class ReturnCopy(Kind):
    name = KIND_NAME
    classes = (NO_GRAPH,)
    reference = NONE

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(ctx)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` at {site.file}:{site.line}: every call returned the same "
            f"`{site.target}`, which the next call empties and refills, so a result kept from "
            "an earlier call (the prediction's features) became the later call's (the target's, "
            "made without grad); a copy keeps what each call stored."
        )


KIND = ReturnCopy()
