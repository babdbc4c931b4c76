"""``with torch.no_grad():`` around an in-place update of a leaf that requires grad (manual
SGD, re-initialising a weight), with the updates next to it: the update is not part of
the model's computation, so autograd must not record it. Also around a write into a view
made under ``no_grad`` and written after the block (weight pruning: ``flat =
w.view(-1)`` inside, ``flat[idx] = 0`` after), where a clone would prune a copy; and
around a write into one of the views ``chunk``/``split``/``unbind`` made of a leaf
(an LSTM's forget-gate bias set at init), where a clone or an out-of-place rewrite would
set a copy and leave the weight as it was.
Rewriting either out of place would silently turn the parameter into a non-leaf that no
optimizer updates."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from autoclone.classify import LEAF_INPLACE, MULTI_OUTPUT_VIEW, NO_GRAD_VIEW
from autoclone.codemods.rewrites import as_no_grad
from autoclone.codemods.sites import INPLACE, NO_GRAD, Site
from autoclone.diagnose import Diagnosis, optimizer_before_backward, where
from autoclone.fixes._ast import FUNCTIONS, forward_line
from autoclone.fixes.base import Candidate, Context, Kind, every_update_reached, ranked
from autoclone.oracle import Reference, judge
from autoclone.outcomes import Outcome
from autoclone.parsed import innermost
from autoclone.trial import RunResult

_METHOD_WRITE = re.compile(r"^(?P<indent>\s*)[A-Za-z_][^=]*\.[a-z]\w*_\(.*\)\s*(#.*)?$")
#: The indentation and receiver of an in-place method call (``    p.add_(``)
_RECEIVER = re.compile(r"^\s*[A-Za-z_][\w.]*(?=\.[a-z]\w*_\()")


def method_write(file: str, line: int, text: str) -> Site | None:
    """A statement that only calls an in-place method on an expression, not a name
    (``getattr(self.rnn, name).chunk(4)[1].fill_(1.0)``): no clone site stands for it, but
    it can run under ``no_grad`` like any update."""
    match = _METHOD_WRITE.match(text)
    if match is None:
        return None
    col = len(match["indent"])
    return Site(id=f"{file}:{line}:{col}:method_write", file=file, line=line, col=col,
                kind=INPLACE, target=text.strip(), code=text.strip(), start=(line, col),
                end=(line, col), depth=0, indent=match["indent"])  # fmt: skip


def _siblings(file: str, lines: tuple[int, int], hit: Site, ctx: Context) -> list[Site]:
    """Other statements of the write's function that write the same receiver in place at
    its indentation (a finite difference's ``p.add_(v, alpha=R)`` then ``p.sub_(...)``,
    each in a loop of its own): the same leaves, so under ``no_grad`` too, at once rather
    than one conflict each."""
    text = ctx.texts.get(file, "")
    receiver = _RECEIVER.match(ctx.line(file, hit.line))
    function = innermost(text, hit.line, FUNCTIONS) if text and receiver else None
    if receiver is None or not isinstance(function, FUNCTIONS):
        return []
    out = []
    for line in range(function.lineno, (function.end_lineno or function.lineno) + 1):
        here = _RECEIVER.match(ctx.line(file, line))
        if lines[0] <= line <= lines[1] or here is None or here.group(0) != receiver.group(0):
            continue
        site = method_write(file, line, ctx.line(file, line))
        wrapped = as_no_grad(site, text, ()) if site is not None else None
        if wrapped is not None:
            out.append(wrapped)
    return out


def _in_a_forward(found: Diagnosis, ctx: Context) -> bool:
    """A leaf written while a library module's ``__call__`` runs (in ``forward`` or one of
    its hooks: a weight standardized on every forward), or while a user's forward does,
    from another tensor that requires grad (a tied weight copied from its source, a slice
    of a prompt added into). Under ``no_grad`` the write becomes a projection of the
    weight, which the reference (the write done as ``.data``) computes too, so the judge
    cannot tell it from a reparametrization the gradient flows through. A user's forward
    clamping its own scale by constants (CLIP's ``logit_scale``) is a projection."""
    own = found.written_from_grad and forward_line(found, ctx) is not None
    in_forward = found.recomputed or found.module_built is not None or own
    return found.error_class == LEAF_INPLACE and in_forward


def _weight_in_a_forward(found: Diagnosis, ctx: Context) -> bool:
    """The refused case: a leaf written in a forward that is not a checkpoint's recomputed
    input (that one is an activation, which the in-place kinds make out of place)."""
    return _in_a_forward(found, ctx) and not found.recomputed


class NoGrad(Kind):
    name = NO_GRAD

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class == NO_GRAD_VIEW:  # a weight's view made under no_grad, written
            return found.mutation is not None  # after the block (pruning): the write too
        if found.error_class == MULTI_OUTPUT_VIEW and found.view_of_leaf:
            return found.mutation is not None  # ``lstm.bias.chunk(4)[1].fill_(1.0)`` at init
        return found.error_class == LEAF_INPLACE and not optimizer_before_backward(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        frame = found.mutation or found.failing
        if frame is None or _in_a_forward(found, ctx):
            return []
        file, line = frame
        updates = {s.line: s for s in ctx.sites
                   if s.file == file and s.kind == INPLACE and s.own_line}  # fmt: skip
        hit = updates.get(line) or method_write(file, line, ctx.line(file, line))
        if hit is None:
            return []
        updates[line] = hit
        first, last = line, line
        while first - 1 in updates and updates[first - 1].indent == hit.indent:
            first -= 1
        while last + 1 in updates and updates[last + 1].indent == hit.indent:
            last += 1
        blocks = [(updates[first], tuple(range(first + 1, last + 1))), (hit, ())]
        wrapped = [as_no_grad(site, ctx.texts[file], block) for site, block in blocks]
        unique = {s.id + str(s.block): [s] for s in wrapped if s is not None}
        if found.error_class == LEAF_INPLACE:  # the same leaves written further on, too
            together = [*unique.values()][0] + _siblings(file, (first, last), hit, ctx)
            if len(together) > 1:
                unique = {"together": together, **unique}
        # right after the clone where the view is made (a constant view: the usual cure),
        # ahead of the other clones, which would write into a copy (prune nothing)
        return ranked(list(unique.values()), start=0.5 if found.error_class == NO_GRAD_VIEW else 0)

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        """The numbers, and no tensor an optimizer updates left without a gradient: a
        write of a trained value (an adversarial patch pasted into the images) done under
        no_grad would never train it."""
        return every_update_reached(run, judge(run, reference, cut=bool(ctx.evidence.get("cut"))))

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        if not _weight_in_a_forward(found, ctx):
            return super().refusal(found, ctx)
        if found.module_built:
            during = f"the module built at {where(found.module_built, ctx.lines)}, or a hook of it"
        else:
            during = f"the forward at {where(forward_line(found, ctx), ctx.lines)}"
        return (
            f"the leaf is written while a module's forward runs ({during}): whether autograd "
            "should differentiate through the write is a choice about training that autoclone "
            "leaves to you"
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        if not _weight_in_a_forward(found, ctx):
            return ""
        return (
            "A weight recomputed from itself on every forward is either a reparametrization "
            "(weight standardization, weight norm: register it with "
            "torch.nn.utils.parametrize.register_parametrization, or compute the new weight "
            "out of place and pass it to the functional op, and gradients flow through it) or "
            "a projection (a max-norm constraint: with torch.no_grad(), best right after "
            "optimizer.step(), and gradients do not)."
        )

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `with torch.no_grad():` around {where((site.file, site.line), lines)}: an "
            "update of a leaf tensor is not part of the model's computation, so autograd must "
            "not record it."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "the update now runs outside autograd, as a parameter update means to; the "
            "numbers match the original up to the failing step and the update's own values"
        ]


KIND = NoGrad()
