"""The statements at the end of a ``with torch.no_grad():`` block that call other modules
than its first statement moved out of the block, where the loss has no graph.

A block written for a frozen part (BYOL's target network, an encoder frozen during a
warm-up) often grows to hold the trained part after it: ``p = self.predictor(self.online
(x))`` under the same ``no_grad`` makes the loss a constant ("element 0 of tensors does not
require grad"). The block's first statement is what it is for; the statements after it
that call none of the callables the first one calls are the trained part, and leave the
block together (one statement left inside would leave half the loss constant). The
context may be a name the function binds to ``torch.no_grad()`` or a conditional of it.
Judged like a cut (the original completed no backward call): K steps with finite losses,
every tensor still trained.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping

from autoclone.classify import NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import EVALUATES, FUNCTIONS, called_name
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "no_grad_narrowed"
_MODES = ("no_grad", "inference_mode")
#: Functions a training step runs: their blocks are tried before any other kind's edit
_TRAINS = re.compile(r"forward|training_step|train_step|step|loss|__call__", re.I)


def _disabling(expr: ast.expr) -> bool:
    """The expression makes a ``torch.no_grad()`` / ``torch.inference_mode()`` somewhere."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            if called_name(node.func) in _MODES:
                return True
    return False


def _contexts(fn: ast.AST, block: ast.With) -> bool:
    """The ``with`` disables grad: directly, or through a name the function binds to it."""
    for item in block.items:
        ctx = item.context_expr
        if _disabling(ctx):
            return True
        if isinstance(ctx, ast.Name):
            bound = [a.value for a in ast.walk(fn) if isinstance(a, ast.Assign)
                     and any(getattr(t, "id", "") == ctx.id for t in a.targets)]  # fmt: skip
            if bound and all(_disabling(v) for v in bound):
                return True
    return False


def _callees(stmt: ast.stmt) -> set[str]:
    return {ast.unparse(n.func) for n in ast.walk(stmt) if isinstance(n, ast.Call)}


def _trained_tail(block: ast.With) -> list[ast.stmt]:
    """The statements after the first that call none of its callables, to the end."""
    first = _callees(block.body[0])
    tail: list[ast.stmt] = []
    for stmt in reversed(block.body[1:]):
        if _callees(stmt) & first or not _callees(stmt):
            break
        tail.insert(0, stmt)
    return tail


def _blocks(ctx: Context) -> Iterator[tuple[str, ast.With, list[ast.stmt], bool]]:
    for file, text in sorted(ctx.texts.items()):
        for fn in ast.walk(parsed(text)):
            if not isinstance(fn, FUNCTIONS) or EVALUATES.search(fn.name):
                continue
            for block in ast.walk(fn):
                if isinstance(block, ast.With) and len(block.body) > 1 and _contexts(fn, block):
                    tail = _trained_tail(block)
                    if tail:
                        yield file, block, tail, bool(_TRAINS.search(fn.name))


def _dedented(lines: list[str], first: int, last: int, shift: int) -> tuple[TextEdit, ...]:
    """Lines ``first..last`` moved ``shift`` columns left (blank lines left as they are)."""
    return tuple(TextEdit(n, 0, "", delete=shift) for n in range(first, last + 1)
                 if lines[n - 1][:shift].strip() == "" and lines[n - 1].strip())  # fmt: skip


def sites(ctx: Context) -> list[tuple[Site, bool]]:
    """One edit per block: its trained tail dedented to the block's own level (and
    whether the block is in a function a training step runs)."""
    out = []
    for file, block, tail, trains in _blocks(ctx):
        lines = ctx.lines.get(file, [])
        shift = tail[0].col_offset - block.col_offset
        start, end = tail[0].lineno, tail[-1].end_lineno or tail[-1].lineno
        edits = _dedented(lines, start, end, shift)
        code = "; ".join(ast.unparse(s) for s in tail)
        site = Site(id=f"{file}:{start}:0:{KIND_NAME}", file=file, line=start, col=0,
                    kind=STATEMENT, target=f"{file}:{block.lineno}", code=code, start=(start, 0),
                    end=(start, 0), depth=0, fix=KIND_NAME, rewrite=edits)  # fmt: skip
        out.append((site, trains))
    return out


def dropped(ctx: Context) -> list[Site]:
    """Each grad-disabling block of a ``forward`` removed, its body dedented: a backbone
    frozen with ``no_grad`` behind something trained (a soft prompt, an adapter) whose
    gradient must pass through it. Tried after the tails: a block for a frozen part the
    trained part does not feed (a teacher) leaves every trained tensor without a gradient
    when dropped, which the judge rejects."""
    out = []
    for file, text in sorted(ctx.texts.items()):
        lines = ctx.lines.get(file, [])
        for fn in ast.walk(parsed(text)):
            if not isinstance(fn, FUNCTIONS) or fn.name != "forward":
                continue
            for block in ast.walk(fn):
                if not (isinstance(block, ast.With) and len(block.items) == 1
                        and block.items[0].optional_vars is None and _contexts(fn, block)):
                    continue  # fmt: skip
                shift = block.body[0].col_offset - block.col_offset
                end = block.end_lineno or block.lineno
                edits = (TextEdit(block.lineno, 0, "", drop_line=True),
                         *_dedented(lines, block.lineno + 1, end, shift))
                code = ast.unparse(block.items[0].context_expr)
                out.append(Site(id=f"{file}:{block.lineno}:0:{KIND_NAME}:dropped", file=file,
                                line=block.lineno, col=0, kind=STATEMENT,
                                target=f"{file}:{block.lineno}", code=f"with {code}:",
                                start=(block.lineno, 0), end=(block.lineno, 0), depth=0,
                                fix=KIND_NAME, rewrite=edits))  # fmt: skip
    return out


class NoGradNarrowed(Kind):
    name = KIND_NAME
    classes = (NO_GRAPH,)
    reference = NONE

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return [*(s for s, _ in sites(ctx)), *dropped(ctx)]

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        found_sites = sites(ctx)
        tails = [Candidate(i - (len(found_sites) + 1.0) * trains, (s,))
                 for i, (s, trains) in enumerate(found_sites)]  # fmt: skip
        return tails + [Candidate(len(found_sites) + i, (s,)) for i, s in enumerate(dropped(ctx))]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.id.endswith(":dropped"):
            return (
                f"Fix: `{site.code}` removed at {site.target}, its body kept: the forward "
                "runs a frozen part behind a trained one, and the block cut the trained "
                "part's gradient off with the graph; the frozen part's weights do not "
                "require grad, so they stay as they are without it."
            )
        return (
            f"Fix: `{site.code}` moved out of the no_grad block at {site.target}: the block "
            "is for its first statement (the frozen part); the statements after it call other "
            "modules, whose outputs the loss differentiates, and under the block they made it "
            "a constant."
        )


KIND = NoGradNarrowed()
