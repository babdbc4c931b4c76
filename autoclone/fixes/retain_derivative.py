"""``retain_graph=True`` in a ``torch.autograd.grad`` call whose derivative the program
takes as a constant.

The call freed the graph the loss then runs through. A call without ``create_graph``
returns constants, so the program as written trains nothing through the derivative; it
fails only because the call also freed the buffers the loss's own backward call needs.
Where the derivative weights, element by element, a tensor that requires grad (a
saliency map weighting a feature penalty, a Fisher diagonal weighting EWC's penalty), or
where the failing loss does not read it at all (a gradient norm logged), keeping the
buffers is the whole fix, and changes no number the program computes.
``create_graph=True`` would add a second-order term the program never had. Judged like a
cut (K finite steps, nothing the original differentiated left without a gradient, the
backward calls the original completed unchanged), so the patch costs no reference run.
Not offered where the derivative is fitted (forces, a PDE residual: ``create_graph``),
where a sibling call makes its graph, where an optimizer stepped before the failing call
(DARTS's architecture step: the kept graph would have saved what the step changed), nor
across iterations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.fixes.create_graph import freeing_call, keyword_site

KIND_NAME = "retain_derivative"


def retain_site(found: Diagnosis, texts: Mapping[str, str]) -> Site | None:
    """``, retain_graph=True`` at the end of the freeing call's arguments, where the
    failing loss does not fit the derivative and no sibling call makes its graph."""
    if found.error_class != BACKWARD_TWICE or found.derivative_in_loss or found.in_step:
        return None
    if found.stepped:  # an optimizer moved what the kept graph saved: the error would
        return None  # come back as a version error (``forward_again`` recomputes)
    if crosses_iterations(found):
        return None
    call = freeing_call(found, texts)
    if call is None or call[3]:
        return None
    return keyword_site(call[0], call[1], call[2], "retain_graph", KIND_NAME)


class RetainDerivative(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True
    neutral = True  # keeping buffers changes no value and no gradient

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return retain_site(found, ctx.texts) is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        site = retain_site(found, ctx.texts)
        return ranked([[site]], start=-2.0) if site is not None else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `retain_graph=True`: the call "
            "keeps the buffers of the graph it went through, which the backward call at "
            f"{where(found.failing, lines)} needs; the derivative stays the constant the "
            "program takes it for."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "the derivative stays a constant, as the program computes it (weighting what "
            "the loss trains, or not read by it); if the loss should also train through "
            "the derivative, pass create_graph=True instead"
        ]


KIND = RetainDerivative()
