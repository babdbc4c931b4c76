"""A list of losses that a forward pass appends to and the loss reads in full, never
emptied: emptied right after the statement that consumes it.

A module records a side loss as it runs (a Switch-MoE block's load-balancing loss,
``self.aux_losses.append(...)``; a regulariser's terms), and the training loss sums the
list (``aux = sum(l for m in aux_modules for l in m.aux_losses)``). Nothing empties it, so
the second step's sum still holds the first step's entries, whose graph the first backward
call freed. The entries are meant to be trained through (a detach where they are made
kills the load-balancing gradient: the detach kind, tried first, fails on the first
step's gradients), and they belong to one step: the list is consumed, then cleared
(Megatron's ``clear_aux_losses_tracker()`` after each iteration). Emptying it at the top of
the layer's ``forward`` instead would drop the entries of a block applied twice per step.

Recognised from the tracer's carry edge: the line that read the older graph iterates or
sums a container (``sum(self.losses)``, ``for l in m.aux_losses`` in a comprehension over
the modules) that some line of the project appends to. The edit empties it on the lines
after that statement, over the same modules. Judged like every detach, and the backward
calls the original completed must come out the same: the first step consumed a list that
held only its own entries.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "clear_consumed"
#: Calls that consume a whole sequence of tensors
_CONSUMERS = frozenset({"sum", "stack", "cat", "torch.stack", "torch.cat", "torch.sum"})


def consumed(found: Diagnosis, ctx: Context) -> list[Site]:
    """The statement inserted after the one that read the older graph: each container it
    consumes whole that a line of the project appends to, emptied."""
    if found.carry_consumer is None:
        return []
    file, line = found.carry_consumer
    try:
        tree = parsed(ctx.texts.get(file, ""))
    except SyntaxError:
        return []
    held = holding(tree, line)
    if held is None or isinstance(held[1][held[2]], ast.Return | ast.Raise):
        return []
    stmt = held[1][held[2]]
    indent = " " * stmt.col_offset
    after = (stmt.end_lineno or stmt.lineno) + 1
    out = []
    for container, loops in _containers(stmt):
        text = ast.unparse(container)
        if not appended_to(text, ctx.texts.values()):
            continue
        code = "\n".join(f"{indent}{'    ' * i}{loop}" for i, loop in enumerate(loops))
        code += ("\n" if loops else "") + f"{indent}{'    ' * len(loops)}{text}.clear()\n"
        out.append(Site(id=f"{file}:{after}:0:{KIND_NAME}:{text}", file=file, line=after,
                        col=len(indent), kind=STATEMENT, target=text,
                        code=" ".join([*loops, f"{text}.clear()"]),
                        start=(after, 0), end=(after, 0), depth=0, indent=indent,
                        fix=KIND_NAME, rewrite=(TextEdit(after, 0, code),)))  # fmt: skip
    return out


def _containers(stmt: ast.stmt) -> Iterator[tuple[ast.expr, list[str]]]:
    """Attributes or names a statement consumes whole: a comprehension's iterable (with
    the loops of the generators before it whose names it reads) or a consuming call's
    first argument."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            for index, gen in enumerate(node.generators):
                if isinstance(gen.iter, ast.Attribute | ast.Name):
                    reads = {n.id for n in ast.walk(gen.iter) if isinstance(n, ast.Name)}
                    loops = [f"for {ast.unparse(g.target)} in {ast.unparse(g.iter)}:"
                             for g in node.generators[:index]
                             if {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
                             & reads]  # fmt: skip
                    yield gen.iter, loops
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in _CONSUMERS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Attribute | ast.Name):
                yield first, []


def appended_to(container: str, texts: Iterable[str]) -> bool:
    """Some line appends to a container of that name (``self.aux_losses.append(...)``
    in a mixin, for ``m.aux_losses``)."""
    last = container.rsplit(".", 1)[-1]
    pattern = re.compile(rf"(?<![\w]){re.escape(last)}\.(append|extend)\(")
    return any(pattern.search(text) for text in texts)


class ClearConsumed(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True  # the first step consumed a list of its own entries only

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and bool(consumed(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(1.6 + i, (s,)) for i, s in enumerate(consumed(found, ctx))]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` right after {where(found.carry_consumer, lines)}: "
            f"`{site.target}` holds the tensors appended while the step ran (at "
            f"{where(found.carry_producer, lines)}), and that statement consumes them; "
            "emptied once consumed, the next step no longer reads entries whose graph "
            f"the backward call at {where(found.previous_backward or found.failing, lines)} "
            "freed."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.target}`" for s in chosen)
        return [
            f"this changes what each step computes: {names} no longer keeps the entries of "
            "earlier steps (the original would have summed them again, through graphs a "
            "backward call had freed); each step consumes only what it appended"
        ]

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return ""


KIND = ClearConsumed()
