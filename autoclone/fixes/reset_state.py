"""``net.reset()`` before each pass, where the model keeps a state it never resets.

The model keeps a state on itself (a spiking neuron's membrane, a stateful RNN's hidden
state) and has a method to reset it that the training loop never calls: each mini-batch
then started from the state the previous one left, whose graph that one's backward call
freed ("Trying to backward through the graph a second time"; snnTorch's answer is
``utils.reset(net)`` at each forward).

Recognised from the tracer's carry edge when the loop's line that consumed the older
graph calls an instance whose class (in the project) defines ``reset``,
``reset_state(s)``, ``reset_hidden`` or ``init_hidden`` taking no arguments, and nothing
in the project calls that method on the instance. Tried before a detach: a detach there
would carry one sample's state into the next batch's, or cut the state inside a sequence.
Judged like a detach: K finite steps, the original's completed calls reproduced, and every
differentiated tensor still reached.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes._ast import EVALUATES, FUNCTIONS, LOOPS, holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import innermost, project_trees

KIND_NAME = "reset_state"
_RESETS = ("reset", "reset_state", "reset_states", "reset_hidden", "init_hidden")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_LIBRARIES = ("torch.", "F.", "nn.", "np.", "math.", "self.__class__")


def _reset_method(cls: ast.ClassDef, classes: Mapping[str, ast.ClassDef], depth: int = 0) -> str:
    """A method of the class (or of a base class in the project) that resets its state
    and takes nothing but ``self``."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name in _RESETS:
            args = node.args
            if len(args.args) == 1 and not args.kwonlyargs and not args.posonlyargs:
                return node.name
    bases = [b.id for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]
    found = (_reset_method(classes[b], classes, depth + 1) for b in bases if depth < 4)
    return next((m for m in found if m), "")


def _called_class(tree: ast.Module, line: int) -> ast.ClassDef | None:
    """The class whose ``forward`` (or ``__call__``) runs ``line``: the instance the
    caller's frame called."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in (f for f in cls.body if isinstance(f, FUNCTIONS)):
            if fn.name in ("forward", "__call__") and fn.lineno <= line <= (fn.end_lineno or 0):
                return cls
    return None


def instances(stmt: ast.stmt, cls: str, trees: Mapping[str, ast.Module]) -> list[str]:
    """The callees of ``stmt`` that can be the instance of ``cls``: ``model`` or
    ``self.model``, made as ``cls(...)`` somewhere in the project under that name (an
    argument keeps its caller's name), or else the only callee that is not a function."""
    made, functions = set(), set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                if isinstance(node.value.func, ast.Name) and node.value.func.id == cls:
                    made |= {ast.unparse(t).split(".")[-1] for t in node.targets}
            elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                functions.add(node.name)
    callees = [ast.unparse(c.func) for c in ast.walk(stmt) if isinstance(c, ast.Call)]
    plain = [c for c in dict.fromkeys(callees) if _DOTTED.fullmatch(c)
             and not c.startswith(_LIBRARIES) and c.split(".")[-1] not in functions]  # fmt: skip
    named = [c for c in plain if c.split(".")[-1] in made]
    return named or (plain if len(plain) == 1 else [])


def reset_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """``<instance>.<reset>()`` before the outermost statement of the consumer's frames that
    calls an instance of a project class with an unused reset method: the model as the loop
    holds it, whether it is ``model``, ``self.model`` or a ``train_step`` argument."""
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    trees = project_trees(ctx.texts)
    nodes = (n for t in trees.values() for n in ast.walk(t))
    classes = {n.name: n for n in nodes if isinstance(n, ast.ClassDef)}
    for index in range(len(frames) - 1, 0, -1):
        (file, line), inner = frames[index], frames[index - 1]
        cls = _called_class(trees[inner[0]], inner[1]) if inner[0] in trees else None
        method = _reset_method(cls, classes) if cls is not None else ""
        held = holding(trees[file], line) if method and file in trees else None
        if held is None:
            continue
        stmt = held[1][held[2]]
        for name in instances(stmt, cls.name, trees):  # type: ignore[union-attr]
            if _reset_in_training(trees, ctx.texts, name.split(".")[-1], method):
                continue
            return [_site(file, stmt, ctx.line(file, stmt.lineno), name, method)]
    return []


def _reset_in_training(
    trees: Mapping[str, ast.Module], texts: Mapping[str, str], name: str, method: str
) -> bool:
    """The program calls ``name.method()`` somewhere other than in an evaluation's loop:
    it resets the state where it means to (once a sequence, once an epoch) and carries it
    in between. A reset before each batch of ``evaluate()`` alone says the batches are
    independent, and training should start each from a fresh state too (an SNN)."""
    for file, call in _reset_calls(trees, method):
        if ast.unparse(call.func.value).split(".")[-1] != name:  # type: ignore[attr-defined]
            continue
        fn = innermost(texts[file], call.lineno, FUNCTIONS)
        loop = innermost(texts[file], call.lineno, LOOPS)
        if not isinstance(fn, FUNCTIONS) or EVALUATES.search(fn.name) is None:
            return True
        if loop is None or loop.lineno < fn.lineno:  # type: ignore[attr-defined]
            return True  # once an evaluation: what training does once an epoch
    return False


def class_at(text: str, line: int) -> ast.ClassDef | None:
    """The innermost class whose methods (or closures they define) run ``line``."""
    found = innermost(text, line, (ast.ClassDef,))
    return found if isinstance(found, ast.ClassDef) else None


def _first_statement(scope: ast.AST) -> ast.stmt:
    """Where a pass begins: the first statement of its body, a docstring skipped."""
    body = scope.body  # type: ignore[attr-defined]
    doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return body[1] if doc and len(body) > 1 else body[0]  # type: ignore[no-any-return]


def _accumulates(text: str, line: int) -> bool:
    """The statement on ``line`` adds to what it stores (``x += e``, ``x = x + e``,
    ``cache[k] = cache.get(k, 0.0) + e``): a penalty or a loss summed over steps, which a
    reset starts afresh. A recurrence (``out, self.h = self.rnn(x, self.h)``) is not: the
    program resets it once a sequence and carries it between windows, cut by a detach."""
    node = innermost(text, line, (ast.Assign, ast.AugAssign))
    if isinstance(node, ast.AugAssign):
        return isinstance(node.op, ast.Add)
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return False
    value, target = node.value, node.targets[0]
    if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Add):
        return False
    held = ast.unparse(target.value if isinstance(target, ast.Subscript) else target)
    return any(re.search(rf"(^|\W){re.escape(held)}(\W|$)", ast.unparse(side))
               for side in (value.left, value.right))  # fmt: skip


def _parameters(fn: ast.AST | None) -> set[str]:
    if not isinstance(fn, FUNCTIONS):
        return set()
    return {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]} - {"self"}


def _reset_calls(trees: Mapping[str, ast.Module], method: str) -> list[tuple[str, ast.Call]]:
    return [(file, n) for file, tree in trees.items() for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == method and not n.args and not n.keywords]  # fmt: skip


def owner_reset_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """``<owner>.<reset>()`` at the start of the pass that calls backward, where the older
    graph was made by adding to a value a method of a project object keeps (a hook
    tracker's ``self.cache``), whose
    own reset the program calls only outside that pass (once an epoch): the state is meant
    to start afresh, and each pass read the one the previous pass left. The call is the
    program's own, with its receiver, where that receiver means the same object (the same
    function, ``self.`` in a method of the same class, or an argument of the function that
    calls backward, as a ``train_step`` is handed what its caller resets)."""
    made, failing = found.carry_producer, found.failing
    trees = project_trees(ctx.texts)
    if made is None or failing is None or made[0] not in trees or failing[0] not in trees:
        return []
    nodes = (n for t in trees.values() for n in ast.walk(t))
    classes = {n.name: n for n in nodes if isinstance(n, ast.ClassDef)}
    owner = class_at(ctx.texts[made[0]], made[1])
    if owner is None or not _accumulates(ctx.texts[made[0]], made[1]):
        return []  # a recurrent state (``self.h = cell(x, self.h)``) is cut, not reset
    method = _reset_method(owner, classes)
    text = ctx.texts[failing[0]]
    scope = innermost(text, failing[1], (*FUNCTIONS, *LOOPS)) if method else None
    if scope is None:
        return []  # the backward call's pass: the innermost loop or function around it
    start = _first_statement(scope)
    here = innermost(text, failing[1], FUNCTIONS)
    first, last = scope.lineno, scope.end_lineno or 0  # type: ignore[attr-defined]
    calls = _reset_calls(trees, method)
    if any(file == failing[0] and first <= call.lineno <= last for file, call in calls):
        return []  # reset in the pass already: not this bug
    ours = class_at(text, failing[1])
    for file, call in calls:
        name = ast.unparse(call.func.value)  # type: ignore[attr-defined]
        mine = class_at(ctx.texts[file], call.lineno)
        same = innermost(ctx.texts[file], call.lineno, FUNCTIONS) is here
        same = same or (name.startswith("self.") and mine is not None and mine is ours)
        same = same or name.split(".")[0] in _parameters(here)  # a train_step's argument
        if file == failing[0] and same:
            return [_site(failing[0], start, ctx.line(failing[0], start.lineno), name, method)]
    return []


def _site(file: str, stmt: ast.stmt, text: str, name: str, method: str) -> Site:
    indent = text[: len(text) - len(text.lstrip())]
    return Site(id=f"{file}:{stmt.lineno}:0:reset_state:{name}", file=file, line=stmt.lineno,
                col=len(indent), kind=STATEMENT, target=name, code=f"{name}.{method}()",
                start=(stmt.lineno, len(indent)), end=(stmt.lineno, len(indent)), depth=0,
                own_line=True, indent=indent, fix=KIND_NAME)  # fmt: skip


def _sites(found: Diagnosis, ctx: Context) -> list[Site]:
    return reset_sites(found, ctx) or owner_reset_sites(found, ctx)


class ResetState(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and bool(_sites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-0.3, (s,)) for s in _sites(found, ctx)]  # before a detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` just before {where((site.file, site.line), lines)}: "
            f"`{site.target}` keeps a state on itself (made at "
            f"{where(found.carry_producer, lines)}) and each pass started from the state the "
            "previous one left, whose graph that pass's backward call had freed. Reset with "
            "the model's own method, every pass starts from a fresh state."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            f"this changes what each pass computes: it starts from the state `{chosen[0].code}` "
            "sets, not the one the previous pass left (a `.detach()` of the state would keep "
            "those values and carry them on; the object's own reset method, never called in "
            "a pass, says which is meant)"
        ]


KIND = ResetState()
