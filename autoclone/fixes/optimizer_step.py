"""An optimizer step between a forward pass and its backward (a GAN's ``optD.step()``
before ``g_loss.backward()`` through a ``D(fake)`` made earlier): no edit of autoclone's
makes that correct, so this kind offers none and says what a person does instead."""

from __future__ import annotations

from collections.abc import Mapping

from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, optimizer_before_backward, where
from autoclone.fixes.base import NONE, Candidate, Context, Kind


class OptimizerStep(Kind):
    name = "optimizer_step"
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return optimizer_before_backward(found)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return ""

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "an optimizer step changed weights that a graph of the same iteration still "
            "needed for backward; no single edit makes this correct"
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        return (
            f"The optimizer step at {where(found.mutation, ctx.lines)} updated weights in "
            f"place that the graph backpropagated at {where(found.failing, ctx.lines)} had "
            f"saved earlier in the same iteration (at {where(found.saved, ctx.lines)}). A "
            "clone or detach at one place would only silence the error (a detach there would "
            "silently stop training through that graph). Cures people use: recompute that "
            "forward pass (for a GAN, `D(fake)`) after the step, or run this backward before "
            "the step."
        )


KIND = OptimizerStep()
