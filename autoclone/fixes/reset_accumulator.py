"""``acc_loss = 0.0`` where a window of gradient accumulation ends: a loss summed over
micro-batches (``acc_loss = acc_loss + loss / k``) and backpropagated every ``k`` steps
(``if (step + 1) % k == 0: acc_loss.backward()``) was never reset, so the next window's
backward reaches into the one this call freed.

A detach right after the backward call trains the same, but the accumulator keeps its
value: whatever the program reads from it afterwards (a logged window loss) becomes the
running total of every window. The program's own starting value, assigned again at the
end of the block that calls backward (after its last read of the window's sum), starts
each window as the first one started. Offered only for that shape: the backward call of
the accumulator itself, inside an ``if`` in the loop that accumulates it, and a starting
value assigned before that loop in the same function; or the same ``if`` in a function
the loop calls with its accumulator as an argument (a ``train_step``), the start in the
caller before its loop; or an accumulator kept on the trainer (``self.total_loss``) whose
backward call is in a method of its own, reset at that method's end. Judged like every
detach.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes._ast import FUNCTIONS, LOOPS, assigned_pairs
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed, project_trees

KIND_NAME = "reset_accumulator"
_ROOT = re.compile(r"^\s*(?P<n>[A-Za-z_]\w*(\.[A-Za-z_]\w*)?)\.backward\(")


def _containing(tree: ast.AST, line: int) -> list[ast.AST]:
    """The nodes whose lines hold ``line``, outermost first."""
    chain: list[ast.AST] = []
    node = tree
    while True:
        inner = next((c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)
                      and c.lineno <= line <= (c.end_lineno or c.lineno)), None)  # fmt: skip
        if inner is None:
            return chain
        chain.append(inner)
        node = inner


def _accumulates(loop: ast.AST, name: str) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            if ast.unparse(node.target) == name:
                return True
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]:
            value = node.value
            if isinstance(value, ast.BinOp) and ast.unparse(value.left) == name:
                return True
    return False


def _start(scope: ast.AST, before: int, name: str, text: str) -> str:
    """The last value assigned to ``name`` before line ``before`` in ``scope`` (one name
    of a tuple assignment too), as the program wrote it; "" if none."""
    found = ""
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign) or node.lineno >= before:
            continue
        for t, v in assigned_pairs(node):
            if ast.unparse(t) == name and isinstance(v, ast.Constant):
                found = ast.get_source_segment(text, v) or found
    return found


def _caller_start(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, ctx: Context) -> str:
    """The starting value of ``name`` where ``fn`` takes it as an argument: a
    ``train_step(model, batch, acc)`` whose caller's loop passes its accumulator in and
    takes it back, with the start assigned before that loop."""
    params = [a.arg for a in fn.args.args]
    if name not in params:
        return ""
    for file, tree in project_trees(ctx.texts).items():
        text = ctx.texts[file]
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            passed = _passed(call, fn.name, params, name)
            if passed:
                chain = _containing(tree, call.lineno)
                loops = [i for i, node in enumerate(chain) if isinstance(node, LOOPS)]
                if loops:
                    scope = next((n for n in reversed(chain[: loops[-1]])
                                  if isinstance(n, FUNCTIONS)), tree)  # fmt: skip
                    start = _start(scope, chain[loops[-1]].lineno, passed, text)  # type: ignore[attr-defined]
                    if start:
                        return start
    return ""


def _passed(call: ast.Call, fn: str, params: list[str], name: str) -> str:
    """The caller's name passed to ``fn`` for its parameter ``name``, or ""."""
    func = call.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if called != fn:
        return ""
    value = next((k.value for k in call.keywords if k.arg == name), None)
    bound = 1 if isinstance(func, ast.Attribute) and params[:1] == ["self"] else 0
    index = params.index(name) - bound
    if value is None and 0 <= index < len(call.args):
        value = call.args[index]
    return value.id if isinstance(value, ast.Name) else ""


def reset_site(found: Diagnosis, ctx: Context) -> Site | None:
    """The reset, or None where the shape is not a window of accumulation."""
    call = found.previous_backward or found.failing
    match = _ROOT.match(ctx.line(*call)) if call else None
    if call is None or match is None:
        return None
    file, name, text = call[0], match["n"], ctx.texts.get(call[0], "")
    try:
        tree = parsed(text)
    except SyntaxError:
        return None
    chain = _containing(tree, call[1])
    functions = [i for i, node in enumerate(chain) if isinstance(node, FUNCTIONS)]
    inside = functions[-1] if functions else -1
    loops = [i for i, node in enumerate(chain) if isinstance(node, LOOPS) and i > inside]
    ifs = [i for i, node in enumerate(chain) if isinstance(node, ast.If) and i > inside]
    window = chain[ifs[-1]] if ifs else None
    if isinstance(window, ast.If) and loops and ifs[-1] > loops[-1]:
        loop, scope = chain[loops[-1]], chain[inside] if inside >= 0 else tree
        accumulated = _accumulates(loop, name)
        start = _start(scope, loop.lineno, name, text) if accumulated else ""  # type: ignore[attr-defined]
    elif isinstance(window, ast.If) and not loops and inside >= 0:
        function = chain[inside]
        accumulated = _accumulates(function, name)
        start = _caller_start(function, name, ctx) if accumulated else ""  # type: ignore[arg-type]
    elif window is None and not loops and inside >= 0 and name.startswith("self."):
        window, start = chain[inside], _attribute_start(tree, name, text)
    else:
        return None
    body = getattr(window, "body", [])
    if not start or not body or isinstance(body[-1], ast.Return):
        return None
    end = body[-1].end_lineno or body[-1].lineno
    indent = " " * body[-1].col_offset
    return Site(id=f"{file}:{end}:0:{KIND_NAME}:{name}", file=file, line=end + 1,
                col=len(indent), kind=STATEMENT, target=name, code=f"{name} = {start}",
                start=(end + 1, len(indent)), end=(end + 1, len(indent)), depth=0,
                own_line=True, indent=indent, fix=KIND_NAME, after=end)  # fmt: skip


def _attribute_start(tree: ast.Module, name: str, text: str) -> str:
    """A window kept on the trainer (``self.total_loss``): accumulated by one method, its
    backward call in another that ends each window (``optimizer_step``), its start
    assigned in the class; then the reset goes at the end of the method that calls
    backward."""
    return _start(tree, 1 << 30, name, text) if _accumulates(tree, name) else ""


class ResetAccumulator(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and reset_site(found, ctx) is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = reset_site(found, ctx)
        return [Candidate(-1.1, (site,))] if site is not None else []  # before any detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        call = found.previous_backward or found.failing
        return (
            f"Fix: `{site.code}` at the end of the block that calls `{site.target}.backward()` "
            f"({where(call, lines)}): each window of accumulation starts from the program's "
            "own starting value, as the first one did, so the next backward call no longer "
            "reaches into the window whose graph this one freed, and what the program reads "
            f"from `{site.target}` is the window's sum, not the running total of all of them."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            f"`{s.target} = {s.target}.detach()` right after the backward call trains the "
            f"same, but would leave `{s.target}` holding the running total of every window"
            for s in chosen
        ]

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return ""


KIND = ResetAccumulator()
