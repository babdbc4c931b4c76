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

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.sites import DETACH, STATEMENT, Site
from autoclone.diagnose import Diagnosis, Frame, target_refusal, where
from autoclone.fixes._ast import FUNCTIONS, assigned_pairs
from autoclone.fixes.base import CONSTANT_TARGETS, Candidate, Context, Kind, ranked
from autoclone.fixes.detach import detach_at
from autoclone.labels import LABEL_LOSSES, REGRESSION_LOSSES, SOFT_CROSS_ENTROPY
from autoclone.parsed import innermost, parsed

KIND_NAME = "constant_target"
#: A version conflict, or a graph kept from an earlier pass, that only a target reaches
_CLASSES = frozenset({INPLACE_VERSION, BACKWARD_TWICE})
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
    return _sites_at(found.target_of, found.target_loss, texts)


def _sites_at(at: Frame, loss: str, texts: Mapping[str, str]) -> list[Site]:
    """``target_sites`` of the loss ``loss`` called on line ``at``."""
    file, line = at
    text = texts.get(file, "")
    try:
        calls = [n for n in ast.walk(parsed(text)) if isinstance(n, ast.Call)
                 and n.lineno <= line <= (n.end_lineno or n.lineno)]  # fmt: skip
    except SyntaxError:
        return []
    if loss == SOFT_CROSS_ENTROPY:
        targets = _soft_targets(text, line)
    else:
        targets = [t for t in (_target_arg(c, loss) for c in calls) if t is not None]
    out = [m for t in targets for m in [_made(file, text, line, t)] if m is not None]
    out += [detach_at(file, text, t, "target_read") for t in targets]
    return list({s.id: s for s in out}.values())


def _made(file: str, text: str, line: int, target: ast.expr) -> Site | None:
    """The target's variable (``mixed_p`` of ``mixed_p[:n]``) detached where it is last
    assigned: its value, or, where a call's result is unpacked (``mixed_x, mixed_p =
    mixup(...)``), ``mixed_p = mixed_p.detach()`` on the next line."""
    while isinstance(target, ast.Subscript):
        target = target.value
    if not isinstance(target, ast.Name):
        return None
    value = _last_assignment(text, line, target.id)
    if value is not None:
        return detach_at(file, text, value, "target_made")
    scope = innermost(text, line, FUNCTIONS) or parsed(text)
    unpacked = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and n.lineno < line
                and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple)
                and target.id in {ast.unparse(e) for e in n.targets[0].elts}]  # fmt: skip
    if not unpacked:
        return None
    stmt = max(unpacked, key=lambda n: n.lineno)
    after = (stmt.end_lineno or stmt.lineno) + 1
    indent = " " * stmt.col_offset
    code = f"{target.id} = {target.id}.detach()"
    return Site(id=f"{file}:{stmt.lineno}:0:target_made_after:{target.id}", file=file,
                line=after, col=stmt.col_offset, kind=STATEMENT, target=target.id, code=code,
                start=(after, stmt.col_offset), end=(after, stmt.col_offset), depth=0,
                own_line=True, indent=indent, fix=DETACH)  # fmt: skip


def _soft_targets(text: str, line: int) -> list[ast.expr]:
    """In ``(q * logp).sum(1)`` on the loss's line, ``q``: the factor of each product that
    is not a ``log_softmax`` (called there, or a name assigned one above)."""
    out = []
    for node in ast.walk(parsed(text)):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mult)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            for factor, other in ((node.left, node.right), (node.right, node.left)):
                if _log_probs(text, line, other) and not _log_probs(text, line, factor):
                    out.append(factor)
    return out


def _log_probs(text: str, line: int, node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        made = _last_assignment(text, line, node.id)
        return made is not None and _log_probs(text, line, made)
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("log_softmax")


def _last_assignment(text: str, line: int, name: str) -> ast.expr | None:
    """The value last assigned to ``name`` above ``line`` in the function holding it (its
    own element of a tuple assignment: ``q1, q2 = f(s1), f(s2)``)."""
    scope = innermost(text, line, FUNCTIONS) or parsed(text)
    values = [value for n in ast.walk(scope) if isinstance(n, ast.Assign) and n.lineno < line
              for target, value in assigned_pairs(n)
              if isinstance(target, ast.Name) and target.id == name]  # fmt: skip
    return max(values, key=lambda v: v.lineno, default=None)


def _every_loss(found: Diagnosis, ctx: Context) -> list[list[Site]]:
    """Every noted loss's target made constant where it is made (else where the loss takes
    it), together: what the reference ran (a content loss and a style loss, each with a
    target computed through the network); the search then drops those not needed."""
    if len({at for at, _ in found.targets}) < 2:
        return []
    chosen: list[Site] = []
    for at, loss in dict.fromkeys(found.targets):
        sites = _sites_at(at, loss, ctx.texts)
        made = [s for s in sites if ":target_made" in s.id]
        chosen += made or sites[-1:]
    return [list({s.id: s for s in chosen}.values())]


class ConstantTarget(Kind):
    name = KIND_NAME
    reference = CONSTANT_TARGETS

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return found.error_class in _CLASSES and found.target_of is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        """Every target where it is made, together, first: the reference makes every
        loss's target constant (``(q1 * p2) + (q2 * p1)``: both codes)."""
        sites = target_sites(found, ctx.texts)
        made = [s for s in sites if ":target_made" in s.id]
        together = [made] if len(made) > 1 else []
        return ranked([*together, *([s] for s in sites), *_every_loss(found, ctx)], start=-2.0)

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return target_refusal(found, ctx.lines)


    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        losses = list(dict.fromkeys(at for at, _ in found.targets))
        if len(losses) > 1:  # the reference made every one constant
            what = "the targets of the losses at " + " and ".join(where(a, lines) for a in losses)
        else:
            what = "the target of the loss at " + (
                where(found.target_of, lines) if found.target_of else "the loss")
        at = f"just before {where((site.file, site.line), lines)}" if site.kind == STATEMENT \
            else f"at {where((site.file, site.line), lines)}"
        then = ("which an earlier backward call freed" if found.error_class == BACKWARD_TWICE
                else "where the in-place write changed a saved tensor")  # fmt: skip
        is_a, it = ("are", "them") if len(losses) > 1 else ("is a", "it")
        constant = "constants" if len(losses) > 1 else "constant"
        return (
            f"Fix {at}: `{site.code}`: {what} {is_a} {constant}, so the backward call no "
            f"longer runs into the graph that made {it}, {then}."
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
