"""``F.linear(x, m.weight, m.bias)`` made ``m(x)``, where the weight a module's hook computes
was read without calling the module.

Pruning (``prune.l1_unstructured(m, "weight")``) and the hook-based weight norm replace a
Linear's ``weight`` by an attribute its forward pre-hook computes from ``weight_orig`` at
each call of the module. A model that shares the layer through the functional form,
``F.linear(h, self.block.weight, self.block.bias)``, never calls it, so every step reads
the tensor computed once, at pruning, whose graph the first backward call freed ("Trying to
backward through the graph a second time"; pytorch#69353, #78109). ``nn.Linear.forward``
is that very ``F.linear`` call: calling the module computes the same numbers from the
current ``weight_orig``. A detach of the weight would freeze the layer.

Recognised from the tracer's carry edge: the line that read the older graph calls
``F.linear`` (``torch.nn.functional.linear``) with a module's own ``weight`` and ``bias``
(or its ``weight`` alone). Judged like a cut, and strictly: the backward calls the
original completed must come out the same, which the module's own forward does.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes._ast import call_rewritten
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "module_call"
_LINEAR = ("F.linear", "torch.nn.functional.linear", "nn.functional.linear")


def _module_of(call: ast.Call) -> str:
    """``m`` of ``F.linear(x, m.weight, m.bias)`` or ``F.linear(x, m.weight)``; "" for any
    other call (keywords, another bias, a weight that is not an attribute)."""
    if ast.unparse(call.func) not in _LINEAR or call.keywords or len(call.args) not in (2, 3):
        return ""
    weight = call.args[1]
    if not (isinstance(weight, ast.Attribute) and weight.attr == "weight"):
        return ""
    owner = ast.unparse(weight.value)
    if len(call.args) == 3 and ast.unparse(call.args[2]) != f"{owner}.bias":
        return ""
    return owner


def sites(found: Diagnosis, ctx: Context) -> list[Candidate]:
    """Each such call on the lines of the consumer's frames, innermost first."""
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    out: list[Candidate] = []
    for file, line in frames:
        text = ctx.texts.get(file, "")
        if "linear" not in ctx.line(file, line):
            continue
        for node in ast.walk(parsed(text)):
            one_line = isinstance(node, ast.Call) and node.lineno == node.end_lineno == line
            owner = _module_of(node) if one_line else ""  # type: ignore[arg-type]
            if owner:
                assert isinstance(node, ast.Call)
                new = f"{owner}({ast.get_source_segment(text, node.args[0])})"
                site = call_rewritten(file, text, node, new, KIND_NAME)
                out.append(Candidate(-1.5 + len(out) / 100, (site,)))
    return out


class ModuleCall(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        try:
            return crosses_iterations(found) and bool(sites(found, ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return sites(found, ctx)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        at = where((site.file, site.line), lines)
        return (
            f"Fix at {at}: `{site.code}`: the module's weight is computed by its own forward "
            f"pre-hook (pruning, a weight norm) when the module is called; read through "
            f"F.linear it stayed the tensor computed at {where(found.carry_producer, lines)}, "
            "whose graph the previous backward call freed. Calling the module runs the same "
            "F.linear on the weight computed now."
        )


KIND = ModuleCall()
