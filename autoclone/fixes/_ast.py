"""Where a line sits in its source: the innermost function or loop around it, the block
that holds its statement, whether it runs in a constructor."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from autoclone.codemods.sites import CLONE, DETACH, STATEMENT, Site
from autoclone.edits import TextEdit
from autoclone.parsed import innermost, parsed

if TYPE_CHECKING:
    from autoclone.diagnose import Diagnosis
    from autoclone.fixes.base import Context


def lines_of(node: ast.AST | None) -> tuple[int, int]:
    """``(first, last)`` line of a node; ``(0, 0)`` for none (the module)."""
    if node is None:
        return (0, 0)
    start = node.lineno  # type: ignore[attr-defined]
    return (start, node.end_lineno or start)  # type: ignore[attr-defined]


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: Names of functions that only evaluate (``evaluate``, ``validation_step``, ``knn_acc``):
#: a grad-disabling decorator or block is where it belongs there
EVALUATES = re.compile(
    r"^_*(eval|evaluate|validat|valid|test|generate|sample|predict|infer|decode|score|knn)"
    r"|(_acc|accuracy|metrics?)$",
    re.I,
)
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def called_name(func: ast.expr) -> str:
    """The last name of what is called: ``f`` of ``f(...)``, ``grad`` of
    ``torch.autograd.grad(...)``; "" for anything else (a call's result called)."""
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def keyword_appended(file: str, text: str, call: ast.Call, keyword: str, value: str,
                     fix: str) -> Site:  # fmt: skip
    """``, {keyword}={value}`` at the end of ``call``'s arguments (a one-line insertion
    before its closing parenthesis)."""
    end_line, end_col = call.end_lineno or call.lineno, (call.end_col_offset or 1) - 1
    source = ast.get_source_segment(text, call) or ""
    added = f", {keyword}={value}"
    return Site(id=f"{file}:{end_line}:{end_col}:{keyword}", file=file, line=end_line,
                col=end_col, kind="keyword", target=source, code=source[:-1] + added + ")",
                start=(end_line, end_col), end=(end_line, end_col), depth=0, fix=fix,
                rewrite=(TextEdit(end_line, end_col, added),))  # fmt: skip


def self_attribute(node: ast.AST, subscripts: int = 0) -> ast.Attribute | None:
    """``self.x`` itself, or under up to ``subscripts`` subscripts (``self.x[i][j]``)."""
    while subscripts and isinstance(node, ast.Subscript):
        node, subscripts = node.value, subscripts - 1
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self":  # fmt: skip
        return node
    return None


def stored(fn: ast.AST, above: int | None = None) -> set[str]:
    """The plain names ``fn`` binds (assignments, loop targets, ``with ... as``), above
    line ``above`` where given; its parameters are not among them."""
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            and (above is None or n.lineno < above)}  # fmt: skip


_GRAD_OFF = re.compile(r"(^|\.)(no_grad|inference_mode)$")


def grad_off_lines(fn: ast.AST) -> set[int]:
    """Lines ``fn`` runs inside ``with torch.no_grad():`` or ``torch.inference_mode()``:
    nothing there is recorded, so a detach on one of them changes nothing."""
    lines: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call)
            and _GRAD_OFF.search(ast.unparse(item.context_expr.func))
            for item in node.items
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def returns_value(fn: ast.AST) -> bool:
    """Some ``return`` in ``fn`` gives its caller a value (``return None`` does not)."""
    return any(isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value is None)
               for n in ast.walk(fn))  # fmt: skip


def in_constructor(source: str, line: int) -> bool:
    """``line`` runs in an ``__init__``: a value made there from parameters is meant to
    train them, so a detach that makes them untrainable is never the repair."""
    try:
        node = innermost(source, line, FUNCTIONS)
    except SyntaxError:
        return False
    return isinstance(node, FUNCTIONS) and node.name == "__init__"


def holding(tree: ast.AST, line: int) -> tuple[ast.AST, list[ast.stmt], int] | None:
    """The innermost block (``body``, ``orelse``, ``finalbody``) with a statement that
    spans ``line``: the block's owner, the block, and that statement's index in it."""
    best: tuple[ast.AST, list[ast.stmt], int] | None = None
    for owner in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(owner, field, None)
            if not isinstance(block, list):
                continue
            for index, stmt in enumerate(block):
                spans = isinstance(stmt, ast.stmt) and stmt.lineno <= line <= (
                    stmt.end_lineno or stmt.lineno
                )
                if spans and (best is None or stmt.lineno >= best[1][best[2]].lineno):
                    best = (owner, block, index)
    return best


def written_in_forward(found: Diagnosis, ctx: Context) -> bool:
    """The write ran while a module's forward did: a library module's (the tracer names
    the module), or a user's (``forward_line``)."""
    return found.module_built is not None or forward_line(found, ctx) is not None


def forward_line(found: Diagnosis, ctx: Context) -> tuple[str, int] | None:
    """The line of a user's ``forward`` method on the write's stack: the writing line
    itself, or the call that led to it (``self.tie_weights()`` first thing in ``forward``)."""
    at = found.mutation or found.failing
    for file, line in found.mutation_frames or ((at,) if at else ()):
        text = ctx.texts.get(file, "")
        fn = innermost(text, line, FUNCTIONS) if text else None
        if isinstance(fn, FUNCTIONS) and fn.name == "forward":
            return file, line
    return None


def made_in_constructor(found: Diagnosis, ctx: Context) -> bool:
    """The older graph was built in an ``__init__`` from parameters an optimizer trains
    (or the tracer could not tell): the detach kinds step aside for ``recompute``. A value
    made there from weights nobody trains (activations harvested once from a frozen
    model) is data, and a detach is the cure in a constructor as in ``main()``."""
    made = found.carry_producer
    return (made is not None and found.carry_trains is not False
            and in_constructor(ctx.texts.get(made[0], ""), made[1]))  # fmt: skip


def assigned_pairs(node: ast.AST | None) -> list[tuple[ast.expr, ast.expr]]:
    """``(target, value)`` of an assignment of one target, element by element where both
    sides are tuples (``self.memory, n = feats[:k], k``); none for anything else."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return []
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        return list(zip(target.elts, value.elts, strict=False))
    return [(target, value)]


Store = tuple[str, str, ast.expr, ast.expr]  # file, its text, target, value


def stores_made_at(found: Diagnosis, texts: Mapping[str, str]) -> list[Store]:
    """``(file, text, target, value)`` of each assignment on a line that made the carried
    graph: where a value is stored, to be cut there."""
    out = []
    for file, number in found.producer_frames:
        text = texts.get(file, "")
        node = innermost(text, number, (ast.Assign,)) if text else None
        out += [(file, text, target, value) for target, value in assigned_pairs(node)]
    return out


Shared = tuple[str, ast.Module, list[ast.stmt], int, int]


def step_block(found: Diagnosis, texts: Mapping[str, str]) -> Shared | None:
    """The file and block holding both the write (an optimizer step) and the failing
    backward call, with the two statements' indexes in it; None where they are apart."""
    write, failing = found.mutation, found.failing
    if write is None or failing is None or write[0] != failing[0]:
        return None
    tree = parsed(texts.get(failing[0], ""))
    step, back = holding(tree, write[1]), holding(tree, failing[1])
    if step is None or back is None or step[1] is not back[1]:
        return None
    return failing[0], tree, step[1], step[2], back[2]


def requires_grad_flag(stmt: ast.stmt) -> tuple[ast.expr, bool] | None:
    """``(x, on)`` of a statement that sets ``x``'s flag: ``x.requires_grad = True/False``,
    ``x.requires_grad_()``, ``x.requires_grad_(False)``; None for anything else (a flag
    that is not a literal too)."""
    if isinstance(stmt, ast.Assign):
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
            return _with_literal(target.value, [stmt.value])
        return None
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr != "requires_grad_":
        return None
    given = [*call.args, *(k.value for k in call.keywords)]
    return (call.func.value, True) if not given else _with_literal(call.func.value, given)


def _with_literal(receiver: ast.expr, given: list[ast.expr]) -> tuple[ast.expr, bool] | None:
    if len(given) != 1 or not isinstance(given[0], ast.Constant):
        return None
    value = given[0].value
    return (receiver, value) if isinstance(value, bool) else None


def char_col(line: str, col: int) -> int:
    """A UTF-8 byte offset (what ``ast`` gives) as a character offset (what edits use)."""
    return len(line.encode()[:col].decode(errors="ignore"))


def argument_cut(
    lines: Sequence[str], call: ast.Call, arg: ast.expr | ast.keyword
) -> TextEdit | None:
    """The edit that drops ``arg`` of ``call`` with the separator before it: from the end
    of the argument before it to the end of ``arg``, both on ``arg``'s one line; None for
    a first argument or one after a line break."""
    line = arg.lineno
    if arg.end_lineno != line:
        return None
    given: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    ends = [(n.end_lineno or n.lineno, n.end_col_offset or 0) for n in given if n is not arg]
    ends = [e for e in ends if e <= (line, arg.col_offset)]
    if not ends or max(ends)[0] != line:
        return None
    text = lines[line - 1]
    cut, end = char_col(text, max(ends)[1]), char_col(text, arg.end_col_offset or 0)
    return TextEdit(line, cut, "", delete=end - cut)


#: Values that may hand back a module's own tensor rather than a new one, or make a leaf
#: on purpose (``torch.zeros(n, requires_grad=True)``, ``nn.Parameter(...)``).
_ALIASING = ("parameters(", "buffers(", "getattr(", "state_dict(", "weight", "bias", "param",
             "requires_grad")  # fmt: skip


def _fresh(value: ast.expr) -> bool:
    """The value is computed (a call or arithmetic), not an alias of another object."""
    if not isinstance(value, ast.Call | ast.BinOp | ast.UnaryOp):
        return False
    text = ast.unparse(value).lower()
    return not any(word in text for word in _ALIASING)


def fresh_binding(scope: ast.AST, name: str, before: int) -> ast.stmt | None:
    """The last plain assignment of a fresh value to ``name`` above line ``before``."""
    found = None
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.lineno >= before:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        target = targets[0] if len(targets) == 1 else None
        named = isinstance(target, ast.Name) and target.id == name
        if named and node.value is not None and _fresh(node.value):
            found = node if found is None or node.lineno > found.lineno else found
    return found


#: Values a ``.detach()`` or ``.clone()`` of the name holding them raises on: a number, a
#: string, a tuple or list display (an LSTM's ``(h, c)``), a dict.
_PLAIN = (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.JoinedStr)


def _plain(value: ast.expr | None) -> bool:
    if isinstance(value, ast.UnaryOp | ast.BinOp):  # ``-1.0``, ``1 / 3``
        return all(_plain(v) for v in ast.iter_child_nodes(value) if isinstance(v, ast.expr))
    return isinstance(value, _PLAIN) and not (
        isinstance(value, ast.Constant) and value.value is None  # ``h = None``: its own edits
    )


def _bindings(scope: ast.AST, name: str) -> list[ast.AST] | None:
    """Nodes of ``scope`` (not of the functions and classes in it) that bind ``name``;
    None where the name is declared global or nonlocal, or bound another way."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            if getattr(node, "name", None) == name:
                out.append(node)
            if isinstance(node, FUNCTIONS):
                todo += node.decorator_list + node.args.defaults
            continue
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return None
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            out.append(node)
        if isinstance(node, ast.arg | ast.alias) and name in (
            getattr(node, "arg", None), getattr(node, "asname", None) or getattr(node, "name", "")
        ):
            out.append(node)
        todo += ast.iter_child_nodes(node)
    return out


#: Calls whose result holds integers or booleans: indices, counts, masks, never a graph
_INTEGER_CALLS = frozenset({"unique", "argsort", "argmax", "argmin", "nonzero", "argwhere",
                            "long", "int", "bool", "randint", "randperm", "multinomial",
                            "bucketize", "searchsorted"})  # fmt: skip


def integer_valued(value: ast.expr | None) -> bool:
    """``torch.cat([src, dst]).unique()``, ``logits.argmax(-1)``, ``x > 0``: a tensor of
    integers or booleans, which has no graph, so ``.detach()`` of it cuts nothing."""
    if isinstance(value, ast.Compare):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _INTEGER_CALLS


def plain_value_at(
    text: str, name: str, line: int, value: Callable[[ast.expr | None], bool] | None = None
) -> bool:
    """``name`` holds a plain value (``total = 0.0``, ``ALPHA = 0.6``) the first time
    ``line`` reads it after it was bound: the last binding above the line is a plain
    assignment in a block that goes on to the line, and nothing rebinds the name between.
    ``name.detach()`` there raises before it can tell anything about the conflict. With
    ``value``, the assigned value is tested by it instead (``integer_valued``)."""
    try:
        tree = parsed(text)
    except SyntaxError:
        return False
    scope: ast.AST = innermost(text, line, FUNCTIONS) or tree
    binds = _bindings(scope, name)
    if binds == [] and scope is not tree:  # a module-level constant read in a function
        scope, binds = tree, _bindings(tree, name)
    if not binds or any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(tree)
                        if name in getattr(n, "names", ())):  # fmt: skip
        return False
    above = [n for n in binds if getattr(n, "lineno", line) < line]
    if not above:
        return False
    last = max(above, key=lambda n: getattr(n, "lineno", 0))
    held = holding(scope, last.lineno)  # type: ignore[attr-defined]
    if held is None:
        return False
    _, block, index = held
    stmt = block[index]
    goes_on = any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in block[index + 1 :])
    assigns = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and (
        isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name)  # fmt: skip
    test = value or _plain
    return goes_on and isinstance(stmt, ast.Assign) and assigns and test(stmt.value)


def expression_names(text: str) -> set[str]:
    """The names and dotted attributes (``self.h``) a piece of source reads; empty where
    it does not parse on its own."""
    tree: ast.AST
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        try:
            tree = ast.parse(text.strip())
        except SyntaxError:
            return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute):
            out.add(ast.unparse(node))
    return out


def _plain_parameter(fn: ast.AST | None, name: str) -> bool:
    """``name`` is a parameter of ``fn`` whose default is a plain value (``alpha=0.6``)."""
    if not isinstance(fn, FUNCTIONS):
        return False
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults,
                     strict=False))  # fmt: skip
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=False) if d]
    return any(a.arg == name and _plain(d) for a, d in pairs)


def plain_attribute(texts: Mapping[str, str], target: str) -> bool:
    """``self.alpha`` is given nothing but plain values anywhere in the project: a literal,
    or a parameter whose default is one (``self.alpha = alpha`` in ``__init__(self,
    alpha=0.6)``), however the object is named where it is set."""
    if not re.fullmatch(r"[A-Za-z_]\w*\.[A-Za-z_]\w*", target):
        return False
    attr = target.split(".")[1]
    values = 0
    for text in texts.values():
        try:
            tree = parsed(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            plain = _plain_field(node, attr)
            if plain is not None:
                if not plain:
                    return False
                values += 1
            if isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(
                    node.target, ast.Attribute) and node.target.attr == attr:  # fmt: skip
                return False
            for stored, value in assigned_pairs(node):
                if not (isinstance(stored, ast.Attribute) and stored.attr == attr):
                    continue
                fn = innermost(text, node.lineno, FUNCTIONS)  # type: ignore[attr-defined]
                name = value.id if isinstance(value, ast.Name) else ""
                if not (_plain(value) or _plain_parameter(fn, name)):
                    return False
                values += 1
            if isinstance(node, ast.Assign) and not assigned_pairs(node) and any(
                    isinstance(t, ast.Attribute) and t.attr == attr
                    for t in ast.walk(node)):  # fmt: skip
                return False  # ``a.x = b.x = ...``, ``self.x, n = pair``: not read here
    return values > 0


_PLAIN_TYPES = frozenset({"int", "float", "bool", "str"})


def _plain_field(node: ast.AST, attr: str) -> bool | None:
    """Whether a config's field ``attr`` holds a plain value: a class body's
    ``attr: float = 0.1`` (a dataclass), an argparse option ``--attr`` with a plain
    ``type=`` or default; None where ``node`` declares no such field."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        if node.target.id != attr:
            return None
        return ast.unparse(node.annotation) in _PLAIN_TYPES or _plain(node.value)
    if not (isinstance(node, ast.Call) and called_name(node.func) == "add_argument"):
        return None
    options = [a.value for a in node.args if isinstance(a, ast.Constant)
               and isinstance(a.value, str)]  # fmt: skip
    dest = next((k.value for k in node.keywords if k.arg == "dest"), None)
    names = {o.lstrip("-").replace("-", "_") for o in options}
    if isinstance(dest, ast.Constant):
        names = {str(dest.value)}
    if attr not in names:
        return None
    kinds = {k.arg: k.value for k in node.keywords}
    typed = kinds.get("type")
    return (typed is not None and ast.unparse(typed) in _PLAIN_TYPES) or (
        typed is None and _plain(kinds.get("default")))


def call_rewritten(file: str, text: str, call: ast.Call, new: str, fix: str) -> Site:
    """A site that puts ``new`` in place of a one-line ``call`` (``torch.tensor(x)``)."""
    line_text = text.splitlines()[call.lineno - 1]
    col = char_col(line_text, call.col_offset)
    end = char_col(line_text, call.end_col_offset or 0)
    return Site(id=f"{file}:{call.lineno}:{col}:{fix}", file=file, line=call.lineno, col=col,
                kind=STATEMENT, target=ast.get_source_segment(text, call) or "", code=new,
                start=(call.lineno, col), end=(call.lineno, col), depth=0, fix=fix,
                rewrite=(TextEdit(call.lineno, col, new, delete=end - col),))  # fmt: skip


def tensor_method_on_target(site: Site, rebinding: bool = True) -> bool:
    """The site is only ``.detach()`` or ``.clone()`` of its own target (``x.detach()``,
    and with ``rebinding`` ``x = x.detach()``): what raises ``AttributeError`` where the
    target holds no tensor."""
    forms = {f"{site.target}.{method}()" for method in ("detach", "clone")}
    if rebinding:
        forms |= {f"{site.target} = {form}" for form in forms}
    return site.fix in (DETACH, CLONE) and site.code.strip() in forms
