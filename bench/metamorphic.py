#!/usr/bin/env python3
"""Metamorphic testing of the repair: the same program in other shapes must get the same answer.

For every fixture and every held-out case (``bench/unseen``) whose answer is one
``expert.py``, each transform below rewrites both the input and the expert into another
shape real projects use. A case of several files (a package run with ``-m``, an entry
script beside local modules, answered by an ``expert/`` overlay) is rewritten file by file:
``train_step``, ``trainer`` and ``rename`` in every file they apply to, the others in the
entry only. A variant is kept only if the transformed expert prints exactly
what the original expert prints (the transform did not change the program). Then
``autoclone fix --dry-run --format json`` repairs the transformed input, and the variant
passes when the status is the case's and, for a fix, the patched script prints what the
transformed expert prints (``bench/unseen/score.py`` does the copying, patching and
comparing) with no more changed lines than the expert's fix in that shape. Every failure
is a repair that depends on the shape of the code: a failing variant whose input no longer
raises the original's error is counted apart (the transform changed the bug), and one that
fails as autoclone fails on the case as it is (scored then) has the original's outcome.

Transforms (module-level "definitions" are the imports, constants, functions and classes
before the first statement that does work; the rest is the "script"):

* ``main``: the script moved into ``def main():`` called under ``if __name__ == "__main__":``.
* ``module``: the definitions moved into a local module ``shape_lib.py``, imported by name.
* ``main+module``: both.
* ``train_step``: the body of the training loop (the first innermost loop whose body calls
  ``.backward(``) moved into ``def train_step(...)`` taking the names the body reads from
  before the loop and returning the names it carries to later code or to its next pass.
* ``trainer``: the setup before the training loop made ``Trainer.__init__``, the loop and
  what follows made ``Trainer.fit(self)``; the names the setup binds and fit reads are
  ``self.`` attributes; ``Trainer().fit()`` under a ``__main__`` guard (or at the call).
* ``rename``: every variable renamed ``x`` -> ``x_v`` by LibCST's scope analysis.
* ``config`` / ``dataclass``: module-level UPPER_CASE int and float constants made argparse
  options read as ``args.name`` / fields of a ``@dataclass class Config`` read as
  ``cfg.name``.

The restructuring transforms skip a program (return None) where they cannot be sure to keep
it: a loop body with ``break``/``continue``/``return``/``yield``, a name carried out of a
pass that may not bind it, a function of the module reading a name that would move, etc.

    OMP_NUM_THREADS=1 python bench/metamorphic.py              # every case, every transform
    OMP_NUM_THREADS=1 python bench/metamorphic.py --only r6_ --transforms main
    OMP_NUM_THREADS=1 python bench/metamorphic.py --only fixtures/,r5_,r6_ --transforms \
        train_step,trainer --keep /tmp/failed    # several prefixes; failing variants kept
    python bench/metamorphic.py --programs-only --transforms rename   # the transforms only

Prints one row per variant and a table per transform (variants, same outcome, wrong
patches, misses, patches larger than the expert's) for bench/RESULTS.md, then each variant
without the same outcome with its summary and patch. Always exits 0: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import cast

import libcst as cst
import libcst.matchers as cst_matchers
from libcst.metadata import (
    Access,
    Assignment,
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    Scope,
    ScopeProvider,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "unseen"))

import score  # noqa: E402 - bench/unseen/score.py: copy, repair, patch, compare

LIB = "shape_lib"
#: Expected fields a variant cannot honour as they are (line numbers move; launchers and
#: device mappings need their own runner): such cases are left out.
_SKIP_KEYS = ("launcher", "cpu_mapping", "check_set", "timeout")


_DEFINES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)


#: Modules whose calls a constant may make and still move above the script (path names)
_PURE = frozenset({"os", "math", "Path", "pathlib"})


def _is_definition(
    stmt: ast.stmt, index: int, started: bool, known: set[str] | None = None,
    once: frozenset[str] | set[str] = frozenset(),
) -> bool:
    """Imports, functions and classes anywhere (defining them earlier changes no number);
    the docstring; constants before the first statement that does work; after it, a
    constant assigned once that reads only what is already defined (``VOCAB = 64``,
    ``HERE = os.path.dirname(__file__)``), which the moved classes may read, where the
    caller says what is defined (``known``) and bound once (``once``)."""
    if isinstance(stmt, _DEFINES):
        return True
    if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False
    if not started:
        return not any(isinstance(node, (ast.Call, ast.Lambda)) for node in ast.walk(stmt))
    if known is None:
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    value = stmt.value
    names = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    if value is None or not all(isinstance(t, ast.Name) and t.id in once for t in names):
        return False
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    if any(isinstance(n, ast.Lambda) for n in ast.walk(value)) or any(
            _root(c.func) not in _PURE for c in calls):  # fmt: skip
        return False
    read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return read <= known | _PURE | {"__file__"}


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _assigned_once(tree: ast.Module) -> set[str]:
    """Names the module's top level binds in exactly one statement."""
    counts: dict[str, int] = {}
    for stmt in tree.body:
        for name in set(_bound([stmt])):
            counts[name] = counts.get(name, 0) + 1
    return {name for name, n in counts.items() if n == 1}


def _text(lines: list[str], stmt: ast.stmt) -> list[str]:
    decorators = getattr(stmt, "decorator_list", [])
    first = min([stmt.lineno, *(d.lineno for d in decorators)])
    return lines[first - 1 : stmt.end_lineno or stmt.lineno]


def _split(source: str) -> tuple[list[str], list[str], list[ast.stmt]] | None:
    """(definition lines, script lines, definition statements), or None without a script."""
    tree = ast.parse(source)
    lines = source.splitlines()
    head: list[str] = []
    script: list[str] = []
    stmts: list[ast.stmt] = []
    started = False
    once = _assigned_once(tree)
    for index, stmt in enumerate(tree.body):
        if _is_definition(stmt, index, started, set(_bound(stmts)), once):
            head += [*_text(lines, stmt), ""]
            stmts.append(stmt)
        else:
            started = True
            script += _text(lines, stmt)
    return (head, script, stmts) if script else None


def to_main(source: str) -> str | None:
    """The script moved into ``def main():`` under a ``__main__`` guard."""
    parts = _split(source)
    if parts is None:
        return None
    head, script, stmts = parts
    name = "main"
    while name in _bound(stmts) or name in source:  # the script's own main() stays its own
        name += "_"
    body = textwrap.indent("\n".join(script), "    ")
    return "\n".join([*head, "", f"def {name}():", body, "", "", 'if __name__ == "__main__":',
                      f"    {name}()", ""])  # fmt: skip


def _bound(stmts: list[ast.stmt]) -> list[str]:
    names: list[str] = []
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"]
        else:
            names += [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store)]  # fmt: skip
    return list(dict.fromkeys(names))


def to_module(source: str) -> tuple[str, str] | None:
    """(the script importing the definitions by name, ``shape_lib.py`` holding them)."""
    parts = _split(source)
    if parts is None:
        return None
    head, script, stmts = parts
    names = _bound([s for s in stmts if not isinstance(s, (ast.Import, ast.ImportFrom))])
    if not any(isinstance(s, (ast.FunctionDef, ast.ClassDef)) for s in stmts):
        return None  # nothing worth a module
    imports = [ast.get_source_segment(source, s) or "" for s in stmts
               if isinstance(s, (ast.Import, ast.ImportFrom))]  # fmt: skip
    entry = [*imports, f"from {LIB} import {', '.join(names)}  # noqa: F401", "", *script, ""]
    return "\n".join(entry), "\n".join(head) + "\n"


def _main_module(source: str) -> tuple[str, str] | None:
    moved = to_module(source)
    if moved is None:
        return None
    entry = to_main(moved[0])
    return (entry, moved[1]) if entry is not None else None


# --- Shapes of the training code itself (train_step, trainer, rename, config, dataclass) ---
#
# Each returns None where it cannot be sure to keep the program (a variant skipped is
# better than a variant that computes something else; the expert check guards as well).

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
#: Names that reach a scope by name at run time (or, for super(), need the class cell):
#: code that uses them is not moved.
_DYNAMIC = frozenset({"locals", "globals", "vars", "eval", "exec", "super", "self"})
Pos = tuple[int, int]


def _fresh(source: str, *candidates: str) -> str:
    """The first candidate that is no word of ``source`` (else the first one, numbered)."""
    words = set(_WORD.findall(source))
    for name in candidates:
        if name not in words:
            return name
    n = 2
    while f"{candidates[0]}{n}" in words:
        n += 1
    return f"{candidates[0]}{n}"


def _pos(node: ast.AST) -> Pos:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _names(node: ast.AST, hidden: frozenset[str] = frozenset()
           ) -> Iterator[tuple[str, bool, ast.AST]]:  # fmt: skip
    """(name, binds, node) for each name ``node`` reads or binds in its own scope:
    comprehension and lambda variables left out; a nested function or class yields its
    name (its decorators, bases and defaults are read here), not its body."""
    if isinstance(node, ast.Name):
        if node.id not in hidden:
            yield node.id, not isinstance(node.ctx, ast.Load), node
    elif isinstance(node, ast.alias):
        yield (node.asname or node.name).split(".")[0], True, node
    elif isinstance(node, ast.ExceptHandler):
        if node.type is not None:
            yield from _names(node.type, hidden)
        if node.name:
            yield node.name, True, node
        for stmt in node.body:
            yield from _names(stmt, hidden)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        heads = list(node.decorator_list)
        if isinstance(node, ast.ClassDef):
            heads += [*node.bases, *(k.value for k in node.keywords)]
        else:
            heads += [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        for head in heads:
            yield from _names(head, hidden)
        yield node.name, True, node
    elif isinstance(node, ast.Lambda):
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]:
            yield from _names(default, hidden)
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        yield from _names(node.body, hidden | params)
    elif isinstance(node, _COMPS):
        bound = hidden | {n.id for g in node.generators for n in ast.walk(g.target)
                          if isinstance(n, ast.Name)}  # fmt: skip
        yield from _names(node.generators[0].iter, hidden)
        for i, gen in enumerate(node.generators):
            if i:
                yield from _names(gen.iter, bound)
            for cond in gen.ifs:
                yield from _names(cond, bound)
        for part in [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]:
            yield from _names(part, bound)
    else:
        for child in ast.iter_child_nodes(node):
            yield from _names(child, hidden)


def _mentions(nodes: list, name: str, binds: bool | None = None) -> bool:
    """Whether ``nodes`` read (binds False), bind (True) or do either (None) ``name``."""
    return any(n == name and (binds is None or b == binds)
               for node in nodes if node is not None for n, b, _ in _names(node))  # fmt: skip


def _either(a: str | None, b: str | None) -> str | None:
    if "read" in (a, b):
        return "read"
    return a if a == b else "maybe"


def _flow(stmts: list, name: str) -> str | None:
    """How one pass through ``stmts`` meets ``name``: "read" (it may be read before this
    pass binds it), "bound" (bound before any read on every path), "maybe" (bound on some
    paths only, not read after), None (not there)."""
    state = None
    for stmt in stmts:
        found = _flow_stmt(stmt, name)
        if found in ("read", "bound"):
            return found
        state = found or state
    return state


def _flow_stmt(stmt: ast.stmt, name: str) -> str | None:
    if isinstance(stmt, ast.If):
        if _mentions([stmt.test], name, False):
            return "read"
        return _either(_flow(stmt.body, name), _flow(stmt.orelse, name))
    if isinstance(stmt, _LOOPS):
        head = [stmt.test] if isinstance(stmt, ast.While) else [stmt.iter, stmt.target]
        if _mentions(head, name, False):
            return "read"
        target = not isinstance(stmt, ast.While) and _mentions([stmt.target], name, True)
        body = "maybe" if target else _flow(stmt.body, name)  # the target is bound for the body
        rest = _flow(stmt.orelse, name)
        if "read" in (body, rest):
            return "read"
        return "maybe" if body or rest else None
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            if _mentions([item.context_expr, item.optional_vars], name, False):
                return "read"
            if _mentions([item.optional_vars], name, True):
                return "bound"
        return _flow(stmt.body, name)
    if type(stmt).__name__ in ("Try", "TryStar"):
        block = cast(ast.Try, stmt)
        found = _flow(block.body, name)
        if found == "read" or _mentions([*block.handlers, *block.orelse, *block.finalbody], name):
            return "read"
        return "maybe" if found else None
    if isinstance(stmt, ast.Assign):
        if _mentions([stmt.value, *stmt.targets], name, False):
            return "read"
        return "bound" if _mentions(stmt.targets, name, True) else None
    if isinstance(stmt, ast.AnnAssign):
        if _mentions([stmt.value, stmt.target], name, False):
            return "read"
        return "bound" if stmt.value is not None and _mentions([stmt.target], name) else None
    if not _mentions([stmt], name):
        return None
    return "read" if isinstance(stmt, ast.AugAssign) or _mentions([stmt], name, False) else "bound"


def _escapes(stmts: list) -> bool:
    """Whether a ``break`` or ``continue`` in ``stmts`` leaves the loop whose body they are."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return True
        if isinstance(stmt, _SCOPES):
            continue
        fields = ("orelse",) if isinstance(stmt, _LOOPS) else (
            "body", "orelse", "finalbody", "handlers", "cases")  # fmt: skip
        for field in fields:
            for child in getattr(stmt, field, None) or []:
                handler = isinstance(child, (ast.ExceptHandler, ast.match_case))
                if _escapes(child.body if handler else [child]):
                    return True
    return False


def _training_loop(tree: ast.Module) -> ast.For | ast.While | None:
    """The first innermost loop whose body calls ``.backward(``."""
    loops = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "backward" for s in node.body for n in ast.walk(s)
        ):  # fmt: skip
            loops.append(node)
    inner = [loop for loop in loops if not any(
        other is not loop and any(other is n for s in loop.body for n in ast.walk(s))
        for other in loops)]  # fmt: skip
    return min(inner, key=_pos, default=None)


def _ancestors(node: ast.AST, tree: ast.Module) -> list[ast.AST]:
    """``node``'s parents, nearest first, ending with the module."""
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    chain = []
    while node in parents:
        node = parents[node]
        chain.append(node)
    return chain


def _first_script_index(tree: ast.Module) -> int:
    started = False
    for index, stmt in enumerate(tree.body):
        if not _is_definition(stmt, index, started):
            return index
    return len(tree.body)


def _own_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
               ) -> tuple[set[str], list[tuple[str, bool, ast.AST]]]:  # fmt: skip
    """(names local to a function or lambda, every name its own scope reads or binds)."""
    body: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    seen = [item for part in body for item in _names(part)]
    local = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    return local | {n for n, b, _ in seen if b}, seen


def _continuation(loop: ast.For | ast.While, chain: list[ast.AST], scope: ast.AST
                  ) -> list[ast.stmt]:  # fmt: skip
    """What the scope may run after a pass of ``loop``'s body, in order, as statements: the
    loop's next passes and its ``else``, the rest of each enclosing block, and each
    enclosing loop's further passes (whole bodies, which may not run)."""
    maybe = ast.Constant(True)
    seq: list[ast.stmt] = [ast.If(test=maybe, body=[*loop.body], orelse=[])]
    seq += getattr(loop, "orelse", [])
    child: ast.AST = loop
    for parent in chain:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list) and any(s is child for s in stmts):
                seq += stmts[[id(s) for s in stmts].index(id(child)) + 1:]
        for handler in getattr(parent, "handlers", []):
            if any(s is child for s in handler.body):
                seq += handler.body[[id(s) for s in handler.body].index(id(child)) + 1:]
        if parent is scope:
            break
        if isinstance(parent, _LOOPS):
            head: ast.stmt = ast.Expr(value=parent.test) if isinstance(parent, ast.While) else (
                ast.Assign(targets=[parent.target], value=ast.Constant(None)))  # fmt: skip
            seq += [ast.If(test=maybe, body=[head, *parent.body], orelse=[]), *parent.orelse]
        child = parent
    return seq


def _step_plan(tree: ast.Module) -> tuple[ast.For | ast.While, list[str], list[str], int] | None:
    """(the training loop, the names its body reads from before it, the names it carries
    out, the first line of the module-level statement to put ``train_step`` before)."""
    loop = _training_loop(tree)
    if loop is None or loop.body[0].lineno == loop.lineno:
        return None
    chain = _ancestors(loop, tree)
    scopes = [a for a in chain if isinstance(a, _SCOPES)]
    if [type(a) for a in scopes] not in ([], [ast.FunctionDef], [ast.FunctionDef, ast.ClassDef]):
        return None  # a loop in a nested function, a lambda or a class body
    func = cast(ast.FunctionDef, scopes[0]) if scopes else None
    body = loop.body
    inside = [n for s in body for n in ast.walk(s)]
    banned = (*_SCOPES[:3], ast.Global, ast.Nonlocal, ast.Return, ast.Yield, ast.YieldFrom,
              ast.Await, ast.Delete)  # fmt: skip
    if any(isinstance(n, banned) or isinstance(n, ast.Name) and n.id in _DYNAMIC - {"self"}
           or isinstance(n, ast.Attribute) and n.attr.startswith("__")
           and not n.attr.endswith("__") for n in inside) or _escapes(body):
        return None  # fmt: skip
    inside_ids = {id(n) for n in inside}
    scope_stmts = func.body if func is not None else tree.body
    outside = [item for s in scope_stmts for item in _names(s) if id(item[2]) not in inside_ids]
    in_body = sorted((item for s in body for item in _names(s)), key=lambda item: _pos(item[2]))
    stored = list(dict.fromkeys(n for n, b, _ in in_body if b))
    start = _pos(body[0])
    if func is not None:
        params = [a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)]
        before = set(params) | {n for n, b, node in outside if b and _pos(node) < start}
        scope_locals = set(params) | {n for n, b, _ in outside + in_body if b}
        nested_root: list[ast.AST] = list(func.body)
    else:
        skip = {id(n) for s in tree.body if isinstance(s, _DEFINES) for n in ast.walk(s)}
        before = {n for n, b, node in outside if b and _pos(node) < start and id(node) not in skip
                  and not (_CONSTANT.fullmatch(n) and n not in stored)}  # fmt: skip
        scope_locals = set()
        nested_root = list(tree.body)
    # a function or lambda that may run during the loop must not see a name the body binds
    for node in (n for root in nested_root for n in ast.walk(root)):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and set(node.names) & set(stored):
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and (
            id(node) not in inside_ids
        ):
            local, seen = _own_names(node)
            if any(not b and n in stored and n not in local for n, b, _ in seen):
                return None
    after = _continuation(loop, chain, func if func is not None else tree)
    flows = {n: _flow(body, n) for n in stored}
    carried = [n for n in stored if flows[n] == "read" or _flow(after, n) == "read"]
    if any(n not in before and flows[n] != "bound" for n in carried):
        return None  # carried from a pass that may not have bound it
    reads = list(dict.fromkeys(n for n, b, _ in in_body
                               if not b and flows.get(n) in (None, "read")))  # fmt: skip
    if any(n not in before and n in scope_locals for n in reads):
        return None  # a local of the function bound only after the loop
    args = [n for n in reads if n in before]
    args += [n for n in carried if n in before and flows[n] != "bound" and n not in args]
    args.sort(key=lambda n: n != "self")  # a method's loop: self first
    top = chain[-2] if len(chain) > 1 else loop
    first = min([_pos(top), *(_pos(d) for d in getattr(top, "decorator_list", []))])[0]
    script = _first_script_index(tree)
    if func is None and script < len(tree.body):
        first = min(first, _pos(tree.body[script])[0])  # after the definitions
    return loop, args, carried, first


Stmt = cst.SimpleStatementLine | cst.BaseCompoundStatement


def _spaced(stmt: Stmt, blank: int) -> Stmt:
    """``stmt`` with exactly ``blank`` empty lines before the comments above it."""
    lines = list(stmt.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return stmt.with_changes(leading_lines=[*[cst.EmptyLine(indent=False)] * blank, *lines])


def _insert(module: cst.Module, index: int, *stmts: Stmt) -> cst.Module:
    """``stmts`` put before the module's statement ``index``, two empty lines around them."""
    body = list(module.body)
    new = [_spaced(stmts[0], 2 if index else 0), *stmts[1:]]
    if index < len(body):
        body[index] = _spaced(body[index], 2)
    return module.with_changes(body=[*body[:index], *new, *body[index:]])


def _top_index(module: cst.Module, positions: object, line: int) -> int:
    """The index of the module-level statement on ``line`` (or the first after it)."""
    for index, stmt in enumerate(module.body):
        if positions[stmt].end.line >= line:  # type: ignore[index]
            return index
    return len(module.body)


def _assign_to(names: list[str]) -> str:
    return f"{', '.join(names)} = " if names else ""


class _SwapBody(cst.CSTTransformer):
    """The target loop's body replaced with one statement; the body is kept in ``block``."""

    def __init__(self, target: cst.CSTNode, call: cst.BaseStatement) -> None:
        super().__init__()
        self.target, self.call = target, call
        self.block: cst.IndentedBlock | None = None

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[no-untyped-def]
        if original_node is self.target and isinstance(updated_node, (cst.For, cst.While)) and (
            isinstance(updated_node.body, cst.IndentedBlock)
        ):
            self.block = updated_node.body
            return updated_node.with_changes(body=self.block.with_changes(body=[self.call]))
        return super().on_leave(original_node, updated_node)


def to_train_step(source: str) -> str | None:
    """The training loop's body moved into ``def train_step(...)`` that takes the names the
    body reads from before the loop and returns the names it carries to later code or to
    its next pass; the loop calls it."""
    tree = ast.parse(source)
    plan = _step_plan(tree)
    if plan is None:
        return None
    loop, args, carried, first = plan
    name = _fresh(source, "train_step", "training_step", "one_step")
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    kind = cst.For if isinstance(loop, ast.For) else cst.While
    target = next((n for n, p in positions.items()
                   if isinstance(n, kind) and p.start.line == loop.lineno), None)  # fmt: skip
    if target is None:
        return None
    call = cst.parse_statement(f"{_assign_to(carried)}{name}({', '.join(args)})\n")
    swap = _SwapBody(target, call)
    module = wrapper.visit(swap)
    if swap.block is None:
        return None
    back = [cst.parse_statement(f"return {', '.join(carried)}\n")] if carried else []
    block = swap.block.with_changes(body=[*swap.block.body, *back],
                                    header=cst.TrailingWhitespace(), footer=[])  # fmt: skip
    params = cst.Parameters([cst.Param(cst.Name(a)) for a in args])
    func = cst.FunctionDef(name=cst.Name(name), body=block, params=params)
    return _tidy(_insert(module, _top_index(wrapper.module, positions, first), func))


def _is_main_guard(stmt: ast.AST) -> bool:
    return isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test) and (
        "__name__" in ast.unparse(stmt.test))  # fmt: skip


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its descendants in the same scope (not into nested functions)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            yield from _walk_scope(child)


class _Renamer(cst.CSTTransformer):
    """Names (by node) replaced with an expression: ``self.x``, ``args.lr``, ``x_v``."""

    def __init__(self, new: dict[cst.Name, cst.BaseExpression]) -> None:
        super().__init__()
        self.new = new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.new.get(original_node, updated_node)


def _references(assign: Assignment) -> list[Access]:
    """The reads of ``assign``, without those in a function or comprehension that binds the
    name itself (LibCST ties a read of a re-bound parameter to the module's name too)."""
    return [ref for ref in assign.references if ref.scope is assign.scope
            or not isinstance(ref.scope, (FunctionScope, ComprehensionScope))
            or not ref.scope.assignments[assign.name]]  # fmt: skip


def _plain_target(node: cst.CSTNode, parents: object) -> bool:
    """Whether a bound name is the target of ``=``, ``+=`` or an annotated assignment
    (where ``self.name`` can stand), not of a ``for``, ``with``, ``except`` or ``:=``."""
    parent = parents[node]  # type: ignore[index]
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        parent = parents[parent]  # type: ignore[index]
    return isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign))


def _is_constant(stmt: ast.stmt) -> bool:
    """``N = 8``, ``D, H = 12, 4 * 12``: UPPER_CASE names bound to values computed from
    literals and other such names only (no call); they stay module-level constants."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    bound = [n for t in targets for n in ast.walk(t)]
    if not all(isinstance(n, (ast.Name, ast.Tuple, ast.Store)) for n in bound):
        return False
    names = [n.id for n in bound if isinstance(n, ast.Name)]
    reads = [n for n in ast.walk(stmt.value)]
    return all(_CONSTANT.fullmatch(n) for n in names) and not any(
        isinstance(n, (ast.Call, ast.Lambda, *_COMPS, ast.Attribute, ast.Subscript))
        or isinstance(n, ast.Name) and not _CONSTANT.fullmatch(n.id) for n in reads
    )


class _Tidy(cst.CSTTransformer):
    """Empty lines printed empty, whatever block they were moved into."""

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine
                        ) -> cst.EmptyLine:  # fmt: skip
        if updated_node.comment is None and not updated_node.whitespace.value:
            return updated_node.with_changes(indent=False)
        return updated_node


def _block(stmt: cst.CSTNode) -> cst.IndentedBlock:
    """The indented body of a compound statement."""
    body = getattr(stmt, "body", None)
    if not isinstance(body, cst.IndentedBlock):
        raise ValueError("not a compound statement with an indented body")
    return body


def _statements(stmt: cst.CSTNode) -> list[Stmt]:
    return cast(list[Stmt], list(_block(stmt).body))


def _tidy(module: cst.Module) -> str:
    return module.visit(_Tidy()).code


def _trainer_host(tree: ast.Module) -> tuple[str, list[ast.stmt], int, ast.AST | None] | None:
    """(kind, the host's statements, the index of the one holding the training loop, the
    host function) for a loop in a module-level function, a ``__main__`` guard or the
    module's script."""
    loop = _training_loop(tree)
    if loop is None:
        return None
    chain = _ancestors(loop, tree)
    scopes = [a for a in chain if isinstance(a, _SCOPES)]
    top = chain[-2] if len(chain) > 1 else loop
    host: ast.AST | None = None
    if scopes:
        if len(scopes) != 1 or not isinstance(scopes[0], ast.FunctionDef):
            return None
        host = scopes[0]
        kind, stmts = "function", list(host.body)
        if host.decorator_list or host.args.posonlyargs or not any(s is host for s in tree.body):
            return None  # decorated, positional-only, or defined inside an if
    elif _is_main_guard(top):
        kind, stmts = "guard", list(top.body)  # type: ignore[attr-defined]
    else:
        if any(_is_main_guard(s) for s in tree.body):
            return None
        kind = "module"
        stmts = [s for i, s in enumerate(tree.body) if not isinstance(s, _DEFINES)
                 and not _is_constant(s) and not _is_definition(s, i, True)]  # fmt: skip
    split = next((i for i, s in enumerate(stmts) if any(n is loop for n in ast.walk(s))), 0)
    return (kind, stmts, split, host) if split else None


def to_trainer(source: str) -> str | None:
    """The script's setup (the statements before the training loop) made ``__init__`` of a
    ``class Trainer`` and the loop with what follows made its ``fit(self)``; the names the
    setup binds and fit reads (the model, the optimizer, the data) are ``self.`` attributes.
    ``Trainer().fit()`` runs under a ``__main__`` guard (or where the function was called)."""
    tree = ast.parse(source)
    found = _trainer_host(tree)
    if found is None:
        return None
    kind, stmts, split, host = found
    nodes = [n for s in stmts for n in ast.walk(s)]
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(tree)) or any(
        isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for s in stmts for n in _walk_scope(s)
    ) or any(isinstance(n, ast.Return) for s in stmts[:split] for n in _walk_scope(s)):
        return None
    words = {w for n in nodes for w in (getattr(n, "id", ""), getattr(n, "attr", ""),
                                        getattr(n, "arg", "")) if isinstance(w, str)}  # fmt: skip
    if any(isinstance(n, ast.Name) and n.id in _DYNAMIC for n in nodes) or any(
        w.startswith("__") and not w.endswith("__") for w in words
    ):
        return None  # code that reaches a scope by name, or a name a class would mangle
    if isinstance(host, ast.FunctionDef):
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == host.name]
        if len(calls) != 1 or not any(isinstance(c, ast.Call) and c.func is calls[0]
                                      for c in ast.walk(tree)):  # fmt: skip
            return None
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    scopes = wrapper.resolve(ScopeProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    module = wrapper.module

    def spans(stmts: Sequence[cst.CSTNode]) -> list[tuple[Pos, Pos]]:
        return [((positions[s].start.line, positions[s].start.column),
                 (positions[s].end.line, positions[s].end.column)) for s in stmts]  # fmt: skip

    def inside(node: cst.CSTNode, where: list[tuple[Pos, Pos]]) -> bool:
        span = positions[node]
        return any(a <= (span.start.line, span.start.column) and
                   (span.end.line, span.end.column) <= b for a, b in where)  # fmt: skip

    if kind == "module":
        lines = {s.lineno for s in stmts}
        at = [i for i, s in enumerate(module.body) if positions[s].start.line in lines]
        if len(at) != len(stmts):
            return None  # statements sharing a line (a = 1; b = 2)
        # the script's first statements stay where they are as far as a function or class
        # of the module reads a name they bind (constants, data the model's code reads)
        script = spans([module.body[i] for i in at])
        scope = scopes[module]
        cut = 0
        for assign in (a for a in scope.assignments if isinstance(a, Assignment)) if scope else []:
            if inside(assign.node, script) and any(
                not inside(r.node, script) for r in _references(assign)
            ):
                cut = max(cut, next(k + 1 for k, i in enumerate(at)
                                    if inside(assign.node, spans([module.body[i]]))))  # fmt: skip
        if cut >= split:
            return None
        stmts, split, at = stmts[cut:], split - cut, at[cut:]
        body = [module.body[i] for i in at]
    else:
        owner_line = host.lineno if isinstance(host, ast.FunctionDef) else stmts[0].lineno
        at = [_top_index(module, positions, owner_line)]
        body = _statements(module.body[at[0]])
    split_line = stmts[split].lineno
    setup = [s for s in body if positions[s].start.line < split_line]
    fit = [s for s in body if positions[s].start.line >= split_line]
    scope = scopes[body[0]]
    if scope is None:
        return None

    parts = (("setup", spans(setup)), ("fit", spans(fit)))

    def region(node: cst.CSTNode) -> str:
        if isinstance(node, cst.Param):
            return "param"
        return next((part for part, where in parts if inside(node, where)), "outside")

    new: dict[cst.Name, cst.BaseExpression] = {}
    kept: list[str] = []  # parameters fit reads
    for name in sorted({a.name for a in scope.assignments}):
        assigns = [a for a in scope.assignments[name] if isinstance(a, Assignment)]
        where = [region(a.node) for a in assigns]
        if kind != "function" and "outside" in where:
            if set(where) == {"outside"}:
                continue  # a definition of the module, not the script's
            return None
        refs = {r for a in assigns for r in _references(a)}
        read = {region(r.node) for r in refs} | {
            "fit" for a, w in zip(assigns, where, strict=True) if w == "fit"
            and isinstance(parents[a.node], cst.AugAssign)}  # fmt: skip
        if "outside" in read:
            return None  # a function of the module reads the script's name
        bound_before = bool({"setup", "param"} & set(where))
        if not bound_before:
            if "setup" in read:
                return None
            continue
        if "fit" not in read:
            continue
        if name == "fit":
            return None
        attr = cst.Attribute(value=cst.Name("self"), attr=cst.Name(name))
        for a in assigns:
            if isinstance(a.node, cst.Param):
                kept.append(name)
            elif isinstance(a.node, cst.Name) and _plain_target(a.node, parents):
                new[a.node] = attr
            else:
                return None
        for r in refs:
            if not isinstance(r.node, cst.Name):
                return None
            new[r.node] = attr
    module = wrapper.visit(_Renamer(new))
    if kind == "module":
        moved = [module.body[i] for i in at]
    else:
        moved = _statements(module.body[at[0]])
    moved = [_spaced(m, 1) if len(m.leading_lines) > 1 and m.leading_lines[1].comment is None
             and m.leading_lines[0].comment is None else m for m in moved]  # one empty line
    setup_new, fit_new = moved[: len(setup)], moved[len(setup):]
    cls_name = _fresh(source, "Trainer", "Experiment", "Runner")
    self_param = cst.Param(cst.Name("self"))
    params = cst.Parameters([self_param])
    prologue = [cst.parse_statement(f"self.{p} = {p}\n") for p in kept]
    if kind == "function":
        host_cst = wrapper.module.body[at[0]]
        assert isinstance(host_cst, cst.FunctionDef)
        params = host_cst.params.with_changes(params=[self_param, *host_cst.params.params])
        doc = 1 if isinstance(host, ast.FunctionDef) and ast.get_docstring(host) else 0
        setup_new = [*setup_new[:doc], *prologue, *setup_new[doc:]]
    init_body = cst.IndentedBlock([_spaced(setup_new[0], 0), *setup_new[1:]])
    init = cst.FunctionDef(name=cst.Name("__init__"), params=params, body=init_body)
    fit_def = cst.FunctionDef(name=cst.Name("fit"), params=cst.Parameters([self_param]),
                              body=cst.IndentedBlock([_spaced(fit_new[0], 0), *fit_new[1:]]),
                              leading_lines=[cst.EmptyLine(indent=False)])  # fmt: skip
    cls = cst.ClassDef(name=cst.Name(cls_name), body=cst.IndentedBlock([init, fit_def]))
    run = f"{cls_name}().fit()"
    rest = list(module.body)
    if kind == "function":
        assert isinstance(host, ast.FunctionDef)
        rest[at[0]] = cls.with_changes(leading_lines=rest[at[0]].leading_lines)
        module = module.with_changes(body=rest).visit(_CallToFit(host.name, cls_name))
    elif kind == "guard":
        guard = rest[at[0]]
        call = cst.parse_statement(run + "\n")
        rest[at[0]] = guard.with_changes(body=_block(guard).with_changes(body=[call]))
        module = _insert(module.with_changes(body=rest), at[0], cls)
    else:
        rest = [s for i, s in enumerate(rest) if i not in set(at)]
        guard_stmt = _spaced(cst.parse_statement(f'if __name__ == "__main__":\n    {run}\n'), 2)
        module = _insert(module.with_changes(body=[*rest, guard_stmt]), at[0], cls)
    return _tidy(module)


class _CallToFit(cst.CSTTransformer):
    """``host(args)`` made ``Trainer(args).fit()``."""

    def __init__(self, host: str, cls_name: str) -> None:
        super().__init__()
        self.host, self.cls_name = host, cls_name

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not (isinstance(updated_node.func, cst.Name) and updated_node.func.value == self.host):
            return updated_node
        build = updated_node.with_changes(func=cst.Name(self.cls_name))
        return cst.Call(func=cst.Attribute(value=build, attr=cst.Name("fit")))


class _Pinned(cst.CSTVisitor):
    """Names whose spelling the program uses: in ``global``/``nonlocal`` statements and in
    self-documenting f-string fields (``f"{x=}"`` prints ``x=``)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Global(self, node: cst.Global) -> None:
        self.names |= {item.name.value for item in node.names}

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names |= {item.name.value for item in node.names}

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if node.equal is not None:
            found = cst_matchers.findall(node.expression, cst_matchers.Name())
            self.names |= {n.value for n in found if isinstance(n, cst.Name)}


def _pinned(module: cst.Module) -> set[str]:
    visitor = _Pinned()
    module.visit(visitor)
    return visitor.names


_RUNTIME_NAMES = re.compile(r"(?<![.\w])(locals|globals|vars|eval|exec)\s*\(")


def to_rename(source: str) -> str | None:
    """Every variable renamed ``x`` -> ``x_v`` with each of its reads: module-level names
    bound by assignments, loops and ``with``, functions' locals, comprehension variables
    (by LibCST's scope analysis); never imports, functions, classes, parameters, class
    attributes, attributes or keyword names, nor a name the program spells out (a
    ``global`` statement, ``f"{x=}"``)."""
    if _RUNTIME_NAMES.search(source):
        return None
    wrapper = MetadataWrapper(cst.parse_module(source))
    scopes = wrapper.resolve(ScopeProvider)
    pinned = _pinned(wrapper.module) | {"_", "self", "cls"}
    words = set(_WORD.findall(source))
    for _ in range(20):
        new = _renames(scopes, pinned, words)
        if isinstance(new, str):
            pinned.add(new)  # a read the analysis ties to several scopes: left as it is
            continue
        return wrapper.visit(_Renamer(new)).code if new else None
    return None


def _renames(scopes: object, pinned: set[str], words: set[str]
             ) -> dict[cst.Name, cst.BaseExpression] | str:  # fmt: skip
    """The new name of every name node, or the name of a read the scope analysis resolves
    to an assignment that is not renamed as well."""
    renamed: dict[Assignment, str] = {}
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():  # type: ignore[attr-defined]
        kinds = (GlobalScope, FunctionScope, ComprehensionScope)
        if isinstance(scope, ClassScope) or not isinstance(scope, kinds):
            continue
        for name in sorted({a.name for a in scope.assignments}):
            assigns = list(scope.assignments[name])
            plain = [a for a in assigns
                     if isinstance(a, Assignment) and isinstance(a.node, cst.Name)]  # fmt: skip
            if name in pinned or name.startswith("__") or len(plain) != len(assigns):
                continue  # an import, a function, a class, a parameter
            fresh = f"{name}_v"
            while fresh in words:
                fresh += "v"
            renamed.update({a: fresh for a in plain})
    new: dict[cst.Name, cst.BaseExpression] = {}
    for assign, fresh in renamed.items():
        new[assign.node] = cst.Name(fresh)  # type: ignore[index]
        for ref in _references(assign):
            if not isinstance(ref.node, cst.Name) or any(
                r not in renamed for r in ref.referents if r.scope is ref.scope
                or not ref.scope.assignments[assign.name]
            ):
                return assign.name
            new[ref.node] = cst.Name(fresh)
    # a read that comes before its assignment in a module-level loop is tied to nothing
    old = {a.name for a in renamed}
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():  # type: ignore[attr-defined]
        for access in scope.accesses:
            if access.node not in new and not access.referents and getattr(
                access.node, "value", None
            ) in old:
                return access.node.value
    return new


def _literal_type(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Integer):
        return "int"
    return "float" if isinstance(node, cst.Float) else None


def _constant_line(stmt: cst.CSTNode, scope: Scope, avoid: set[str], source: str
                   ) -> list[tuple[str, str, str]]:  # fmt: skip
    """(name, type, literal) of each constant a module-level line binds, if it binds only
    UPPER_CASE names to int or float literals, once in the module (else [])."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return []
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target, value = small.targets[0].target, small.value
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        target, value = small.target, small.value
    else:
        return []
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target, value)]
    if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple):
        if len(target.elements) != len(value.elements):
            return []
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]
    found = []
    code = cst.Module([]).code_for_node
    for name, literal in pairs:
        kind = _literal_type(literal)
        if not (isinstance(name, cst.Name) and kind and _CONSTANT.fullmatch(name.value)) or (
            name.value in avoid or f"--{name.value.lower()}" in source
            or len(scope.assignments[name.value]) != 1
        ):  # fmt: skip
            return []
        found.append((name.value, kind, code(literal)))
    return found


def _runs_at_import(scope: Scope | None) -> bool:
    """Whether code in ``scope`` runs as the module runs (not in a function's call)."""
    while scope is not None and not isinstance(scope, GlobalScope):
        if isinstance(scope, FunctionScope):
            return False
        scope = scope.parent
    return True


def _with_import(body: list[Stmt], line: str) -> list[Stmt]:
    """``line`` (an import) put first among the module's imports."""
    def is_import(stmt: Stmt) -> bool:
        return isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ) and "__future__" not in cst.Module([stmt]).code  # fmt: skip

    def is_docstring(stmt: Stmt) -> bool:
        return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))

    index = next((i for i, s in enumerate(body) if is_import(s)), None)
    new = cst.parse_statement(line + "\n")
    if index is None:
        index = 1 if body and is_docstring(body[0]) else 0
        return [*body[:index], new, *body[index:]]
    new = new.with_changes(leading_lines=body[index].leading_lines)
    return [*body[:index], new, body[index].with_changes(leading_lines=[]), *body[index + 1:]]


def to_config(source: str, style: str = "argparse") -> str | None:
    """Module-level numeric constants (``EPOCHS = 8``) made options of an argparse parser
    (``parser.add_argument("--epochs", type=int, default=8)``, read as ``args.epochs``), or
    with ``style="dataclass"`` fields of a ``@dataclass class Config`` read as
    ``cfg.epochs``; parsed (instantiated) where the script starts, or right after the
    options if the module's own top-level code reads them before that."""
    if _RUNTIME_NAMES.search(source):
        return None
    words = set(_WORD.findall(source))
    own_import = re.search(r"^from dataclasses import .*\bdataclass\b", source, re.M)
    if style == "dataclass" and "dataclass" in words and not own_import:
        return None
    tree = ast.parse(source)
    wrapper = MetadataWrapper(cst.parse_module(source))
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    module = wrapper.module
    scope = scopes[module]
    if scope is None:
        return None
    avoid = _pinned(module)
    found = [(i, line) for i, s in enumerate(module.body)
             if (line := _constant_line(s, scope, avoid, source))]  # fmt: skip
    if not found:
        return None
    holder = _fresh(source, *(("args", "hparams", "opts") if style == "argparse"
                              else ("cfg", "config", "conf")))  # fmt: skip
    parser = _fresh(source, "parser", "hp_parser")
    cls_name = _fresh(source, "Config", "TrainConfig", "HParams")
    new: dict[cst.Name, cst.BaseExpression] = {}
    eager = len(module.body)
    for _, line in found:
        for name, _, _ in line:
            for assign in scope.assignments[name]:
                for ref in _references(assign) if isinstance(assign, Assignment) else []:
                    if not isinstance(ref.node, cst.Name):
                        return None
                    new[ref.node] = cst.Attribute(cst.Name(holder), cst.Name(name.lower()))
                    if _runs_at_import(ref.scope):
                        line_no = positions[ref.node].start.line
                        eager = min(eager, _top_index(module, positions, line_no))
    body = list(wrapper.visit(_Renamer(new)).body)
    first = found[0][0]
    start_ast = _first_script_index(tree)
    start = _top_index(module, positions, tree.body[start_ast].lineno) if start_ast < len(
        tree.body) else len(body)  # fmt: skip
    drop = {i for i, _ in found}
    at_start = first < start <= eager and start not in drop and start < len(body) and (
        isinstance(body[start], cst.SimpleStatementLine))  # the script's first line, not main()
    if style == "argparse":
        block: list[Stmt] = [
            cst.parse_statement(f"{parser} = argparse.ArgumentParser()\n")
        ]
        reads = "parse_known_args()[0]" if "parse_args" in source or "sys.argv" in source else (
            "parse_args()")  # fmt: skip
        made = cst.parse_statement(f"{holder} = {parser}.{reads}\n")
    else:
        block = []
        made = cst.parse_statement(f"{holder} = {cls_name}()\n")
    fields: list[Stmt] = []
    for index, line in found:
        original = module.body[index]
        assert isinstance(original, cst.SimpleStatementLine)
        for k, (name, kind, literal) in enumerate(line):
            text = (f'{parser}.add_argument("--{name.lower()}", type={kind}, default={literal})'
                    if style == "argparse" else f"{name.lower()}: {kind} = {literal}")  # fmt: skip
            stmt = cst.parse_statement(text + "\n")
            if k == 0 and (index != first or style == "dataclass"):
                stmt = stmt.with_changes(leading_lines=original.leading_lines)
            if k == len(line) - 1:
                stmt = stmt.with_changes(trailing_whitespace=original.trailing_whitespace)
            fields.append(stmt)
    if style == "argparse":
        block[0] = block[0].with_changes(leading_lines=module.body[first].leading_lines)
        block += fields
    else:
        fields[0] = _spaced(fields[0], 0)
        decorator = cst.Decorator(cst.Name("dataclass"))
        block = [_spaced(cst.ClassDef(name=cst.Name(cls_name), body=cst.IndentedBlock(fields),
                                      decorators=[decorator],
                                      leading_lines=module.body[first].leading_lines),
                         2 if first else 0)]  # fmt: skip
    out: list[Stmt] = []
    after_block = style == "dataclass" and at_start
    for index, stmt in enumerate(body):
        if index == first:
            out += block
            if not at_start:
                out.append(_spaced(made, 2) if style == "dataclass" else made)
        if index == start and at_start:
            out.append(made.with_changes(leading_lines=stmt.leading_lines))
            stmt = stmt.with_changes(leading_lines=[])
        if index in drop:
            continue
        if after_block and index > first:
            stmt = _spaced(stmt, 2)
            after_block = False
        out.append(stmt)
    if style == "argparse" and not re.search(r"^import argparse\b", source, re.M):
        out = _with_import(out, "import argparse")
    if style == "dataclass" and not own_import:
        out = _with_import(out, "from dataclasses import dataclass")
    return _tidy(module.with_changes(body=out))


#: name -> source -> {file name: text}, or None where the transform does not apply.
Transform = Callable[[str], "dict[str, str] | None"]


def _files_main(source: str) -> dict[str, str] | None:
    out = to_main(source)
    return {"input.py": out} if out is not None else None


def _files_module(source: str) -> dict[str, str] | None:
    out = to_module(source)
    return {"input.py": out[0], f"{LIB}.py": out[1]} if out is not None else None


def _files_both(source: str) -> dict[str, str] | None:
    out = _main_module(source)
    return {"input.py": out[0], f"{LIB}.py": out[1]} if out is not None else None


def _one_file(rewrite: Callable[[str], str | None]) -> Transform:
    def files(source: str) -> dict[str, str] | None:
        out = rewrite(source)
        return {"input.py": out} if out is not None else None

    return files


TRANSFORMS: dict[str, Transform] = {
    "main": _files_main,
    "module": _files_module,
    "main+module": _files_both,
    "train_step": _one_file(to_train_step),
    "trainer": _one_file(to_trainer),
    "rename": _one_file(to_rename),
    "config": _one_file(to_config),
    "dataclass": _one_file(lambda source: to_config(source, "dataclass")),
}


#: Transforms that apply to every file of a case of several; the others to its entry only.
_ANY_FILE = (TRANSFORMS["train_step"], TRANSFORMS["trainer"], TRANSFORMS["rename"])


def cases(only: str) -> list[Path]:
    """Fixtures and held-out cases answered by an ``expert.py`` or an ``expert/`` overlay (a
    package run with ``-m``, or an entry script beside local modules), with a plain expected
    status (no launcher, no device mapping, no smaller check sizes, no notebook).
    ``only``: comma-separated prefixes of a case's name or of ``fixtures/<name>`` /
    ``unseen/<name>``."""
    prefixes = [p for p in only.split(",") if p]
    found = []
    folders = [*sorted((ROOT / "fixtures").iterdir()), *sorted((ROOT / "bench/unseen").iterdir())]
    for folder in folders:
        spec = folder / "expected.json"
        if not spec.is_file():
            continue
        expected = json.loads(spec.read_text())
        if not (folder / "input.py").is_file() and not expected.get("module"):
            continue
        label = f"{'fixtures' if folder.parent.name == 'fixtures' else 'unseen'}/{folder.name}"
        if prefixes and not any(folder.name.startswith(p) or label.startswith(p) for p in prefixes):
            continue
        if any(key in expected for key in (*_SKIP_KEYS, "notebook")):
            continue
        if expected["status"] == "fixed" and not _has_expert(folder):
            continue
        found.append(folder)
    return found


def _has_expert(case: Path) -> bool:
    return (case / "expert.py").is_file() or (case / "expert").is_dir()


def _entry(case: Path) -> list[str]:
    """What follows ``python`` to run the case: ``input.py`` or ``-m pkg.train``."""
    return score.load_entry(case)


_ANSWERS = ("expert.py", "expert", "wrong.py", "expected.patch", "README.md", "__pycache__")


def variant(case: Path, transform: Transform, dest: Path) -> Path | None:
    """The case in the transform's shape under ``dest``, or None where it does not apply."""
    if (case / "expert").is_dir() or not (case / "input.py").is_file():
        return _files_variant(case, transform, dest)
    try:
        files = transform((case / "input.py").read_text())
    except (SyntaxError, cst.ParserSyntaxError):
        return None  # a case about bad input: no shape to move it into
    if files is None:
        return None
    shutil.copytree(case, dest, ignore=shutil.ignore_patterns(*_ANSWERS))
    for name, text in files.items():
        (dest / name).write_text(text)
    _expected(case, dest)
    if (case / "expert.py").is_file():
        expert_files = transform((case / "expert.py").read_text())
        if expert_files is None:
            shutil.rmtree(dest)
            return None
        (dest / "expert").mkdir()
        for item in dest.iterdir():
            if item.name not in ("expert", "expected.json", *files):
                target = dest / "expert" / item.name
                (shutil.copytree if item.is_dir() else shutil.copy)(item, target)
        for name, text in expert_files.items():
            (dest / "expert" / name).write_text(text)
    return dest


def _expected(case: Path, dest: Path) -> None:
    """The variant's expected.json: the case's status, arguments and module."""
    expected = json.loads((case / "expected.json").read_text())
    kept = {"status": expected["status"], "args": expected.get("args", [])}
    if expected.get("module"):
        kept["module"] = expected["module"]
    (dest / "expected.json").write_text(json.dumps(kept))


def _shaped(transform: Transform, path: Path, top: bool) -> dict[str, str] | None:
    """The transform of one file of a case of several; a transform that adds a module only
    for a file at the top (``import shape_lib`` finds no module inside a package)."""
    try:
        files = transform(path.read_text())
    except (SyntaxError, cst.ParserSyntaxError, UnicodeDecodeError):
        return None
    if files is None or (len(files) > 1 and not top):
        return None
    return files


def _files_variant(case: Path, transform: Transform, dest: Path) -> Path | None:
    """A case of several files in the transform's shape: every Python file the transform
    applies to, in both the input and the expert's version of it (a file whose expert
    version it does not apply to is left as it is in both)."""
    shutil.copytree(case, dest, ignore=shutil.ignore_patterns(*_ANSWERS))
    experts = case / "expert"
    if experts.is_dir():
        shutil.copytree(experts, dest / "expert", ignore=shutil.ignore_patterns("__pycache__"))
    moved = False
    module = json.loads((case / "expected.json").read_text()).get("module")
    entry = Path(*module.split(".")).with_suffix(".py") if module else Path("input.py")
    for path in sorted(p for p in dest.rglob("*.py") if p.relative_to(dest).parts[0] != "expert"):
        rel = path.relative_to(dest)
        if rel != entry and transform not in _ANY_FILE:
            continue  # a script's shape (main, module, options) is the entry's
        files = _shaped(transform, path, top=len(rel.parts) == 1)
        mine = dest / "expert" / rel
        theirs = _shaped(transform, mine, len(rel.parts) == 1) if mine.is_file() else files
        if files is None or theirs is None:
            continue
        for name, text in files.items():
            (path.parent / name.replace("input.py", path.name)).write_text(text)
        if mine.is_file():
            for name, text in theirs.items():
                (mine.parent / name.replace("input.py", path.name)).write_text(text)
        elif len(files) > 1:  # the expert keeps this file: its new module too
            for name, text in files.items():
                if name != "input.py":
                    (dest / "expert" / name).write_text(text)
        moved = True
    if not moved:
        shutil.rmtree(dest)
        return None
    _expected(case, dest)
    return dest


def expert_output(case: Path, args: list[str]) -> score.Run | None:
    """What the case's expert prints (None for a case without one)."""
    if not _has_expert(case):
        return None
    with tempfile.TemporaryDirectory(prefix="metamorphic_") as name:
        script = [sys.executable, *_entry(case), *args]
        return score.run(script, score.copy_expert(case, Path(name) / "a"), score.RUN_TIMEOUT)


def same_program(case: Path, moved: Path, args: list[str],
                 original: score.Run | None = None) -> str:  # fmt: skip
    """'' when the transformed expert prints what the original does; else why not."""
    if not _has_expert(case):
        return ""
    original = original or expert_output(case, args)
    shaped = expert_output(moved, args)
    if original is None or shaped is None or original.code != 0 or shaped.code != 0:
        return "an expert run failed: " + ((shaped.stderr if shaped else "") or "").strip()[-300:]
    if original.stdout != shaped.stdout:
        return "the transformed expert does not print the original's numbers: " + (
            score.first_difference(shaped.stdout, original.stdout))  # fmt: skip
    return ""


def judge(moved: Path, args: list[str], expert: score.Run | None) -> score.Result:
    """``score.judge`` with the expert's output known (it printed the original's)."""
    if expert is None:
        return score.judge(moved)
    expected, _ = score.load_expected(moved)
    result = score.Result(moved.name, expected)
    with tempfile.TemporaryDirectory(prefix="metamorphic_") as name:
        tmp = Path(name)
        report = score.repair(score.copy_case(moved, tmp / "work"), args, tuple(_entry(moved)))
        result.status = str(report.get("status"))
        result.runs, result.seconds = str(report.get("runs", "-")), str(report.get("seconds", "-"))
        result.edits = score.describe_edits(report)
        result.summary, result.patch = str(report.get("summary", "")), report.get("patch") or ""
        if result.status != "fixed":
            result.verdict = "ok" if result.status == expected else "miss"
            return result
        work = score.copy_case(moved, tmp / "patched")
        problem = score.apply_patch(work, result.patch) if result.patch.strip() else "empty patch"
        if problem:
            result.verdict, result.detail = "WRONG PATCH", problem
        else:
            patched = score.run([sys.executable, *_entry(moved), *args], work, score.RUN_TIMEOUT)
            tail = (patched.stderr.strip().splitlines() or [""])[-1]
            difference = (f"the patched script fails: {tail}" if patched.code != 0
                          else score.first_difference(patched.stdout, expert.stdout))  # fmt: skip
            result.verdict = "WRONG PATCH" if difference else "ok"
            result.detail = difference
        if expected != "fixed":
            result.detail = f"patch vs expert: {result.verdict} {result.detail}".strip()
            result.verdict = "miss"
    return result


def _error(folder: Path, args: list[str]) -> str:
    """The last line of what the folder's entry raises, digits masked ('' if none)."""
    with tempfile.TemporaryDirectory(prefix="metamorphic_") as name:
        work = score.copy_case(folder, Path(name) / "a")
        done = score.run([sys.executable, *_entry(folder), *args], work, score.RUN_TIMEOUT)
    if done.code == 0:
        return ""
    return re.sub(r"\d+", "N", (done.stderr.strip().splitlines() or ["?"])[-1])


def _changed(before: list[str], after: list[str]) -> int:
    """Changed lines: per differing block, the larger of the lines removed and added."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
               if tag != "equal")  # fmt: skip


def expert_size(moved: Path) -> int:
    """Changed lines of the expert's fix in the variant's shape."""
    total = 0
    for fixed in (moved / "expert").rglob("*.py"):
        before = moved / fixed.relative_to(moved / "expert")
        old = before.read_text().splitlines() if before.is_file() else []
        total += _changed(old, fixed.read_text().splitlines())
    return total


def patch_size(patch: str) -> int:
    """Changed lines of a unified diff, counted as ``_changed`` counts them."""
    total = removed = added = 0
    for line in patch.splitlines():
        if line.startswith(("---", "+++", "diff ", "index ")):
            continue
        if line.startswith("-"):
            removed += 1
        elif line.startswith("+"):
            added += 1
        else:
            total, removed, added = total + max(removed, added), 0, 0
    return total + max(removed, added)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="",
                        help="comma-separated prefixes of case names (or fixtures/, unseen/)")
    parser.add_argument("--transforms", default=",".join(TRANSFORMS))
    parser.add_argument("--programs-only", action="store_true",
                        help="only check that each transformed expert prints the original's")
    parser.add_argument("--keep", type=Path, help="copy every failing variant into this folder")
    options = parser.parse_args(argv)
    chosen = [t for t in options.transforms.split(",") if t]
    counts = ("variants", "same", "wrong", "miss", "larger", "as_original", "dropped",
              "other_error")  # fmt: skip
    tally = {t: dict.fromkeys(counts, 0) for t in chosen}
    rows = ["| case | transform | expected | status | verdict | runs | lines (expert) |",
            "| --- " * 7 + "|"]  # fmt: skip
    failures: list[str] = []
    baseline: dict[Path, score.Result] = {}  # autoclone on the case as it is
    with tempfile.TemporaryDirectory(prefix="metamorphic_") as name:
        for case in cases(options.only):
            spec = json.loads((case / "expected.json").read_text())
            args = [str(a) for a in spec.get("args", [])]
            original = None
            for t in chosen:
                moved = variant(case, TRANSFORMS[t], Path(name) / f"{case.name}__{t}")
                if moved is None:
                    continue
                original = original or expert_output(case, args)
                why = same_program(case, moved, args, original)
                expert = original if original is not None and original.code == 0 else None
                if why:
                    tally[t]["dropped"] += 1
                    print(f"{case.name} [{t}] dropped: {why}", file=sys.stderr, flush=True)
                    _keep(options.keep, moved, "dropped")
                    continue
                if options.programs_only:
                    tally[t]["variants"] += 1
                    continue
                print(f"{case.name} [{t}] ...", file=sys.stderr, flush=True)
                result = judge(moved, args, expert)
                if result.verdict not in ("ok",) and _error(case, args) != _error(moved, args):
                    tally[t]["other_error"] += 1  # the variant is not the same bug
                    print(f"  dropped: raises another error ({result.verdict})", file=sys.stderr)
                    continue
                tally[t]["variants"] += 1
                if result.verdict != "ok":
                    base = baseline.setdefault(case, score.judge(case))
                    if (base.status, base.verdict) == (result.status, result.verdict):
                        tally[t]["same"] += 1  # the outcome of the case as it is
                        tally[t]["as_original"] += 1  # (the case's own miss, in every shape)
                        print(f"  as the original case: {base.status}, {base.verdict}",
                              file=sys.stderr, flush=True)  # fmt: skip
                        continue
                sizes, larger = "", False
                if result.verdict == "ok" and result.status == "fixed":
                    got, want = patch_size(result.patch), expert_size(moved)
                    sizes, larger = f"{got} ({want})", got > want
                if larger:  # by more lines than autoclone's patch of the case as it is?
                    extra = _original_excess(case, baseline.setdefault(case, score.judge(case)))
                    larger = extra is None or got - want > extra
                    tally[t]["larger" if larger else "as_original"] += 1
                    if larger:
                        why = f"patch {got} changed lines, the expert's {want}; the original's: "
                        failures.append(_failure(case, t, result, f"{why}{extra} more"))
                tally[t]["same"] += result.verdict == "ok" and not larger
                tally[t]["wrong"] += result.verdict == "WRONG PATCH"
                tally[t]["miss"] += result.verdict == "miss"
                rows.append(f"| {case.name} | {t} | {result.expected} | {result.status} "
                            f"| {result.verdict} | {result.runs} | {sizes} |")  # fmt: skip
                print(f"  {result.status}: {result.verdict} {sizes} ({result.seconds} s)",
                      file=sys.stderr, flush=True)  # fmt: skip
                if result.verdict != "ok":
                    failures.append(_failure(case, t, result, result.detail))
                    print(failures[-1], file=sys.stderr, flush=True)
                    _keep(options.keep, moved, "failed")
    print("\n".join(rows))
    print("\n| transform | variants | same outcome (of which the case's own miss) | wrong "
          "patches | misses | patch larger than the expert's | not the same program | raises "
          "another error |")  # fmt: skip
    print("| --- " * 8 + "|")
    for t, n in tally.items():
        print(f"| {t} | {n['variants']} | {n['same']} ({n['as_original']}) | {n['wrong']} "
              f"| {n['miss']} | {n['larger']} | {n['dropped']} | {n['other_error']} |")  # fmt: skip
    if failures:
        print("\n## Variants without the same outcome\n\n" + "\n\n".join(failures))
    return 0


def _failure(case: Path, transform: str, result: score.Result, detail: str) -> str:
    patch = f"\n\n```diff\n{result.patch.rstrip()}\n```" if result.patch else ""
    return (f"### {case.name} [{transform}]: {result.verdict}, status {result.status} "
            f"(expected {result.expected}), {result.runs} runs\n\nsummary: {result.summary}"
            f"\n\n{detail}{patch}")  # fmt: skip


def _original_excess(case: Path, result: score.Result) -> int | None:
    """How many more lines autoclone's patch of the case as it is changes than its expert's
    fix (None where that repair did not pass)."""
    if result.verdict != "ok" or result.status != "fixed":
        return None
    if (case / "expert").is_dir():
        return patch_size(result.patch) - expert_size(case)
    want = _changed((case / "input.py").read_text().splitlines(),
                    (case / "expert.py").read_text().splitlines())  # fmt: skip
    return patch_size(result.patch) - want


def _keep(folder: Path | None, moved: Path, why: str) -> None:
    if folder is not None:
        shutil.copytree(moved, folder / why / moved.name, dirs_exist_ok=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
