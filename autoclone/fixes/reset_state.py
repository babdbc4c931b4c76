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
from autoclone.fixes.base import NONE, Candidate, Context, Kind

KIND_NAME = "reset_state"
_RESETS = ("reset", "reset_state", "reset_states", "reset_hidden", "init_hidden")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _classes(ctx: Context) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}
    for text in ctx.texts.values():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        out.update({n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)})
    return out


def _reset_method(cls: ast.ClassDef) -> str:
    """A method of the class that resets its state and takes nothing but ``self``."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name in _RESETS:
            args = node.args
            if len(args.args) == 1 and not args.kwonlyargs and not args.posonlyargs:
                return node.name
    return ""


def reset_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    outer = found.carry_frames[-1] if found.carry_frames else found.carry_consumer
    if outer is None:
        return []
    file, line = outer
    text, classes = ctx.line(file, line), _classes(ctx)
    everything = "\n".join(ctx.texts.values())
    out = []
    for name in dict.fromkeys(_CALLED.findall(text)):
        made = re.search(rf"^\s*{name}\s*=\s*([A-Za-z_]\w*)\(", ctx.texts.get(file, ""), re.M)
        method = _reset_method(classes[made[1]]) if made and made[1] in classes else ""
        if not method or re.search(rf"\b{name}\.{method}\(", everything):
            continue
        indent = text[: len(text) - len(text.lstrip())]
        code = f"{name}.{method}()"
        out.append(Site(id=f"{file}:{line}:0:reset_state:{name}", file=file, line=line,
                        col=len(indent), kind=STATEMENT, target=name, code=code,
                        start=(line, len(indent)), end=(line, len(indent)), depth=0,
                        own_line=True, indent=indent, fix=KIND_NAME))  # fmt: skip
    return out


class ResetState(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and bool(reset_sites(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return [Candidate(-0.3, (s,)) for s in reset_sites(found, ctx)]  # before a detach

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
            "those values and carry them on; the model's unused reset method says which is "
            "meant)"
        ]


KIND = ResetState()
