"""``memory.detach()`` after the optimizer step: the module's own method to cut the state
it keeps across steps, never called.

A temporal graph network's memory (PyG's ``TGNMemory``), a stateful RNN wrapper: the module
stores each step's new state on itself (``self.memory[n_id] = new_mem``), read by the next
step's forward, and defines ``detach()`` (``detach_state``, ``repackage_hidden``, ...) to cut
that state's history once the step is over. Never called, the next backward call runs into
the previous step's graph: freed ("Trying to backward through the graph a second time") or
saved with weights the optimizer step has since changed (a version error). PyG's TGN
example calls ``memory.detach()`` right after ``optimizer.step()``; so does the edit, with
the program's own method, on the instance the loop holds. A detach of the write inside the
module would cut the state before the step's own update is stored, not after the step.

Recognised from the tracer's carry: the older value was made by a method of a project
class that defines such a method taking only ``self``, the loop's line that read it calls an
instance of that class (``memory``, ``self.memory``), and nothing in the project calls the
method on that instance. Tried before a detach. Judged like a detach: K finite steps, the
original's completed calls reproduced, and every differentiated tensor still reached.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS, holding
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.reset_state import class_at, instances
from autoclone.parsed import innermost, project_trees

KIND_NAME = "detach_method"
_DETACHES = ("detach", "detach_state", "detach_states", "detach_memory", "detach_hidden",
             "repackage_hidden")  # fmt: skip


def _method(cls: ast.ClassDef) -> str:
    """The class's own no-argument method that cuts its state's history."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name in _DETACHES:
            args = node.args
            if len(args.args) == 1 and not args.kwonlyargs and not args.posonlyargs:
                return node.name
    return ""


def _after_step(body: list[ast.stmt], index: int) -> ast.stmt:
    """The statement the cut goes after: the first ``.step()`` call after the backward
    call at ``body[index]`` in its block, else the backward call itself."""
    for stmt in body[index + 1 :]:
        calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
        if any(isinstance(c.func, ast.Attribute) and c.func.attr == "step" for c in calls):
            return stmt
    return body[index]


def detach_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """``<instance>.<method>()`` after the step that follows the failing backward call."""
    made, failing = found.carry_producer, found.failing
    trees = project_trees(ctx.texts)
    if made is None or failing is None or not {made[0], failing[0]} <= set(trees):
        return []
    owner = class_at(ctx.texts[made[0]], made[1])
    method = _method(owner) if owner is not None else ""
    at = holding(trees[failing[0]], failing[1]) if method else None
    if owner is None or at is None:
        return []
    everything = "\n".join(ctx.texts.values())
    called = rf"\.{method}\(" if method != "detach" else None  # ``x.detach()`` is everywhere
    if called and re.search(called, everything):
        return []  # the program cuts the state already (wrongly, maybe: another bug)
    built = _made(owner.name, trees)
    text = ctx.texts[failing[0]]
    scope = innermost(text, failing[1], FUNCTIONS)
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    for file, line in reversed(frames):  # the loop's line first: the instance it holds
        if file != failing[0] or innermost(text, line, FUNCTIONS) is not scope:
            continue  # the name must mean the instance where the cut goes
        held = holding(trees[file], line)
        for name in instances(held[1][held[2]], owner.name, trees) if held else []:
            last = name.split(".")[-1]
            if last not in built or re.search(rf"\b{re.escape(last)}\.{method}\(", everything):
                continue
            stmt = _after_step(at[1], at[2])
            return [_site(failing[0], stmt, ctx.line(failing[0], stmt.lineno), name, method)]
    return []


def _made(cls: str, trees: Mapping[str, ast.Module]) -> set[str]:
    """The names (last part) an instance of ``cls`` is bound to: ``memory = Cls(...)``,
    ``self.memory = Cls(...)``."""
    nodes = (node for tree in trees.values() for node in ast.walk(tree))
    made = [n for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            and ast.unparse(n.value.func).split(".")[-1] == cls]  # fmt: skip
    return {ast.unparse(t).split(".")[-1] for node in made for t in node.targets}


def _site(file: str, stmt: ast.stmt, text: str, name: str, method: str) -> Site:
    indent = text[: len(text) - len(text.lstrip())]
    end = stmt.end_lineno or stmt.lineno
    code = f"{name}.{method}()"
    return Site(id=f"{file}:{end}:0:{KIND_NAME}:{name}", file=file, line=end, col=len(indent),
                kind=STATEMENT, target=name, code=code, start=(end, len(indent)),
                end=(end, len(indent)), depth=0, indent=indent, fix=KIND_NAME,
                rewrite=(TextEdit(end + 1, 0, f"{indent}{code}\n"),))  # fmt: skip


class DetachMethod(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class in (BACKWARD_TWICE, INPLACE_VERSION) and bool(
            detach_sites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-2.0, (s,)) for s in detach_sites(found, ctx)]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        made = f" (made at {where(found.carry_producer, lines)})" if found.carry_producer else ""
        return (
            f"Fix: `{site.code}` after {where((site.file, site.line), lines)}: `{site.target}` "
            f"keeps a state across steps{made} and has its own method to cut its history, "
            "which the loop never called; each step's backward call then ran into the previous "
            "step's graph. Cut once the step is over, the state keeps its values and the next "
            "step starts a graph of its own."
        )


KIND = DetachMethod()
