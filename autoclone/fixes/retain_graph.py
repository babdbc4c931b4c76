"""``retain_graph=True`` on the first of two backward calls over one graph in one iteration
(two losses, one forward pass, gradients meant to add). Judged against a run in which no
backward call frees its graph. Never offered where it would only delay the error (an
optimizer step between the calls changes what the graph saved: the reference run fails),
nor where the first call's gradients leak into another optimizer's step (see
``detach_shared``), nor for the same loss backpropagated twice (a slip, not a design),
nor inside an optimizer's closure (``closure_recompute``: L-BFGS evaluates it again at
moved parameters), nor where the second call's loss holds the first one
(``loss.backward()``, then ``(loss + loss_adv).backward()``: the first loss's gradient
would count twice)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE
from autoclone.codemods.rewrites import backward_call, retain_graph
from autoclone.codemods.sites import RETAIN_GRAPH, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes.base import RETAINED, Candidate, Context, Kind, ranked


def two_calls_one_graph(found: Diagnosis) -> bool:
    """Two backward calls in one iteration went through one graph."""
    return (
        found.error_class == BACKWARD_TWICE
        and found.previous_backward is not None
        and not crosses_iterations(found)
    )


def same_loss_twice(found: Diagnosis, lines: Mapping[str, list[str]]) -> bool:
    """Both backward calls are made on the same expression (``loss.backward()`` twice),
    on two lines: one line run again by a loop is one loss per pass (deep supervision)."""
    if found.previous_backward == found.failing:
        return False
    calls = []
    for frame in (found.previous_backward, found.failing):
        text = lines.get(frame[0], []) if frame else []
        if not frame or not 0 < frame[1] <= len(text):
            return False
        calls.append(backward_call(text[frame[1] - 1]))
    return calls[0] is not None and calls[0] == calls[1]


class RetainGraph(Kind):
    name = RETAIN_GRAPH
    reference = RETAINED

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return two_calls_one_graph(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        first = found.previous_backward
        if first is None or same_loss_twice(found, ctx.lines) or ctx.evidence.get("leaks"):
            return []
        if found.recounts:  # the first loss is part of the second: counted twice
            return []
        if ctx.evidence.get("retained_failed"):  # the retained run itself failed
            return []
        if found.in_step:  # an optimizer's closure: evaluated again at moved parameters
            return []
        return ranked([[site] for site in retain_graph(*first, ctx.line(*first))])

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        if ctx.evidence.get("retained_failed"):
            return str(ctx.evidence["retained_failed"])
        if found.in_step:
            return (
                f"the backward call at {where(found.failing, ctx.lines)} is made inside an "
                "optimizer's step (its closure), which the optimizer calls again after moving "
                "the parameters: with retain_graph=True every call would backpropagate the "
                "graph of the first parameters and return the first loss, so the optimizer "
                "would never move. Compute the loss's inputs inside the closure"
            )
        if same_loss_twice(found, ctx.lines):
            return (
                "the same loss is backpropagated twice in one iteration; if the gradient "
                "should count twice pass retain_graph=True to the first call, but usually "
                "the second call is a slip to remove"
            )
        if found.recounts:
            return (
                f"the loss backpropagated at {where(found.failing, ctx.lines)} contains the "
                f"loss already backpropagated at {where(found.previous_backward, ctx.lines)}: "
                "retain_graph=True would count that loss's gradient twice; backpropagate only "
                "the part the second call adds (the adversarial loss, the extra term)"
            )
        return "no retain_graph edit is supported by the evidence for this error"

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `retain_graph=True`: this backward "
            "call keeps the buffers its graph saved, so the second backward call through the "
            "same graph can use them."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "the gradients are those both backward calls meant to accumulate (checked against "
            "a run where no backward call frees its graph, in which no optimizer stepped on "
            "gradients of a loss that was not its own); adding the losses and calling "
            "backward once computes the same gradients in one pass and frees the graph at once"
        ]


KIND = RetainGraph()
