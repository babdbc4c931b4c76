"""``.detach()`` of a loss's target whose graph alone holds the tensor the write changed: a
DQN's bootstrap target computed by a target network that is then synced in place, labels
guessed by averaging the model's own predictions with ``+=``.

The conflict exists only because autograd differentiates a target, which by convention is
a constant. The edits that keep the numbers of the program as written (the write out of
place, a clone) train the model to move its own targets: wrong patches no comparison with
the program as written catches. So no in-place kind is offered, and this kind is judged
against a run that does not assume its edit: the script with the target of every watched
loss (``autoclone.labels``) made constant where the loss takes it. Where that run fails
too (a hand-written loss reads the same target), autoclone says why and leaves it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.classify import INPLACE_VERSION
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, target_refusal, where
from autoclone.fixes._ast import FUNCTIONS
from autoclone.fixes.base import CONSTANT_TARGETS, Candidate, Context, Kind, ranked
from autoclone.fixes.detach import detach_at
from autoclone.labels import LABEL_LOSSES, REGRESSION_LOSSES
from autoclone.parsed import innermost, parsed

KIND_NAME = "constant_target"
_LOSSES = frozenset(LABEL_LOSSES + REGRESSION_LOSSES)
_LOSS_NAME = re.compile(r"loss|criterion", re.IGNORECASE)


def _target_arg(call: ast.Call, loss: str) -> ast.expr | None:
    """The ``target`` a call of the loss ``loss`` is given: its second argument, or by
    keyword (a loss module's call reads as ``criterion(pred, target)``)."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name != loss and (name in _LOSSES or not _LOSS_NAME.search(name)):
        return None
    keyword = next((k.value for k in call.keywords if k.arg == "target"), None)
    return keyword or (call.args[1] if len(call.args) > 1 else None)


def target_sites(found: Diagnosis, texts: Mapping[str, str]) -> list[Site]:
    """Where the target is made (the last assignment of its name above the loss, in the
    loss's function), then the target where the loss takes it."""
    if found.target_of is None:
        return []
    file, line = found.target_of
    text = texts.get(file, "")
    try:
        calls = [n for n in ast.walk(parsed(text)) if isinstance(n, ast.Call)
                 and n.lineno <= line <= (n.end_lineno or n.lineno)]  # fmt: skip
    except SyntaxError:
        return []
    out: list[Site] = []
    for target in filter(None, (_target_arg(call, found.target_loss) for call in calls)):
        if isinstance(target, ast.Name):
            made = _last_assignment(text, line, target.id)
            if made is not None:
                out.append(detach_at(file, text, made, "target_made"))
        out.append(detach_at(file, text, target, "target_read"))
    return list({s.id: s for s in out}.values())


def _last_assignment(text: str, line: int, name: str) -> ast.expr | None:
    """The value last assigned to ``name`` above ``line`` in the function holding it."""
    scope = innermost(text, line, FUNCTIONS) or parsed(text)
    values = [n.value for n in ast.walk(scope) if isinstance(n, ast.Assign)
              and n.lineno < line and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]  # fmt: skip
    return max(values, key=lambda v: v.lineno, default=None)


class ConstantTarget(Kind):
    name = KIND_NAME
    reference = CONSTANT_TARGETS

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class == INPLACE_VERSION and found.target_of is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked([[site] for site in target_sites(found, ctx.texts)], start=-2.0)

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return target_refusal(found, ctx.lines)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        loss = where(found.target_of, lines) if found.target_of else "the loss"
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: the target of the "
            f"loss at {loss} is a constant, so the backward call no longer runs into the graph "
            "that made it, where the in-place write changed a saved tensor."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "this changes what is differentiated: no gradient flows into the loss's target "
            "any more (a target is a constant by convention: a DQN's bootstrap target, "
            "guessed labels); the patch computes what the script computes with every loss "
            "target constant"
        ]


KIND = ConstantTarget()
