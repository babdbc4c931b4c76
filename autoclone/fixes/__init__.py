"""The fix kinds, one module each, in the order the repair consults them.

A diagnosis is offered the kinds that support it and share the first one's reference
(the kinds judged alike: inplace=False, out of place and clone all keep the numbers); their
candidates interleave by rank. Adding a kind means one module here, listed in ``KINDS``,
and its fixtures.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from autoclone.codemods.sites import DETACH, Site
from autoclone.diagnose import Diagnosis
from autoclone.fixes import (
    alias_out_of_place,
    argument_write,
    backward_in_block,
    cache_decorator,
    cache_flag,
    checkpoint_nonreentrant,
    clear_consumed,
    clear_list,
    clone,
    clone_leaf_local,
    closure_recompute,
    constant_target,
    copy_construct,
    create_graph,
    detach,
    detach_buffer,
    detach_discarded,
    detach_estimate,
    detach_method,
    detach_out_of_place,
    detach_shared,
    detach_target,
    detach_view,
    detach_written_buffer,
    forward_again,
    function_grads,
    function_numbers,
    grad_decorator,
    grad_mode_block,
    grad_of_base,
    hook_guard,
    hook_return,
    index_rows,
    inference_to_no_grad,
    inplace_false,
    leaf_view_out_of_place,
    loop_out_of_place,
    memo_dropped,
    module_call,
    no_grad,
    no_grad_narrowed,
    no_grad_weight_edit,
    once_differentiable_dropped,
    optimizer_step,
    out_dropped,
    out_of_place,
    parametrize_uncached,
    per_pass,
    recompute,
    recounted_term,
    requires_grad_earlier,
    requires_grad_input,
    rescore,
    reset_accumulator,
    reset_state,
    retain_derivative,
    retain_graph,
    return_copy,
    seed_shape,
    snapshot_out_of_place,
    stack_list,
    stack_views,
    step_later,
    trainer_inference_mode,
    untoggle,
    weight_outside_loss,
    where_guard,
)
from autoclone.fixes._ast import (
    integer_valued,
    plain_attribute,
    plain_value_at,
    tensor_method_on_target,
)
from autoclone.fixes.base import Candidate, Context, FixKind
from autoclone.session import Project

#: Consulted in this order; the first kind that supports a diagnosis sets the reference.
KINDS: tuple[FixKind, ...] = (
    detach_estimate.KIND,
    alias_out_of_place.KIND,
    snapshot_out_of_place.KIND,
    cache_decorator.KIND,
    cache_flag.KIND,
    recounted_term.KIND,
    constant_target.KIND,
    retain_derivative.KIND,
    create_graph.KIND,
    forward_again.KIND,
    rescore.KIND,
    step_later.KIND,
    backward_in_block.KIND,
    optimizer_step.KIND,
    detach_discarded.KIND,
    closure_recompute.KIND,
    recompute.KIND,
    parametrize_uncached.KIND,
    memo_dropped.KIND,
    detach_target.KIND,
    module_call.KIND,
    per_pass.KIND,
    reset_state.KIND,
    detach_method.KIND,
    reset_accumulator.KIND,
    no_grad_weight_edit.KIND,
    detach_written_buffer.KIND,
    detach_buffer.KIND,
    detach.KIND,
    clear_list.KIND,
    clear_consumed.KIND,
    leaf_view_out_of_place.KIND,
    no_grad.KIND,
    detach_shared.KIND,
    retain_graph.KIND,
    hook_guard.KIND,
    seed_shape.KIND,
    where_guard.KIND,
    out_dropped.KIND,
    hook_return.KIND,
    argument_write.KIND,
    clone_leaf_local.KIND,
    loop_out_of_place.KIND,
    stack_views.KIND,
    index_rows.KIND,
    detach_view.KIND,
    detach_out_of_place.KIND,
    requires_grad_earlier.KIND,
    grad_of_base.KIND,
    requires_grad_input.KIND,
    trainer_inference_mode.KIND,
    inference_to_no_grad.KIND,
    checkpoint_nonreentrant.KIND,
    grad_mode_block.KIND,
    function_numbers.KIND,
    function_grads.KIND,
    once_differentiable_dropped.KIND,
    weight_outside_loss.KIND,
    copy_construct.KIND,
    grad_decorator.KIND,
    untoggle.KIND,
    return_copy.KIND,
    no_grad_narrowed.KIND,
    stack_list.KIND,
    inplace_false.KIND,
    out_of_place.KIND,
    clone.KIND,
)


def context(project: Project, evidence: Mapping[str, Any]) -> Context:
    """What the kinds see of a project, with what the runs so far showed."""
    texts = {rel: src.text for rel, src in project.sources.items()}
    return Context(project.sites, texts, project.lines, evidence)


def applicable(found: Diagnosis, ctx: Context) -> list[FixKind]:
    """The kinds that support the diagnosis and are judged like the first of them."""
    supporting = [k for k in KINDS if k.supports(found, ctx)]
    return [k for k in supporting if k.reference == supporting[0].reference]


def candidates(
    kinds: list[FixKind], found: Diagnosis, ctx: Context
) -> list[tuple[FixKind, Candidate]]:
    """Every kind's candidates, best rank first (ties: the order of ``KINDS``), each edit
    set once."""
    pairs = [(c.rank, n, k, c) for n, k in enumerate(kinds) for c in k.candidates(found, ctx)]
    seen: set[tuple[str, ...]] = set()
    out = []
    for _, _, kind, cand in sorted(pairs, key=lambda p: (p[0], p[1])):
        key = tuple(s.id for s in cand.sites)
        if any(_detached_list(s, ctx) or _on_plain_value(s, ctx) or _of_integers(s, ctx)
               for s in cand.sites):  # fmt: skip
            continue
        if cand.sites and key not in seen:
            seen.add(key)
            out.append((kind, cand))
    return out


def _detached_list(site: Site, ctx: Context) -> bool:
    """``.detach()`` of a container the project appends to (``self.model.penalties``):
    a list has no ``detach``, and the run would only raise ``AttributeError``."""
    return (site.fix == DETACH and site.code.endswith(".detach()")
            and clear_consumed.appended_to(site.target, ctx.texts.values()))  # fmt: skip


def _on_plain_value(site: Site, ctx: Context) -> bool:
    """``ALPHA.detach()`` of ``ALPHA = 0.6``, ``total.detach()`` where the pass starts
    with ``total = 0.0``, ``self.alpha.detach()`` of an attribute only ever given plain
    values: the run would only raise ``AttributeError`` on its first pass."""
    name = site.target
    if not name.replace(".", "_").isidentifier() or not tensor_method_on_target(site):
        return False
    if "." in name:
        return plain_attribute(ctx.texts, name)
    text = ctx.texts.get(site.file)
    return text is not None and plain_value_at(text, name, site.line)


def _of_integers(site: Site, ctx: Context) -> bool:
    """``.detach()`` of indices or a mask (``n_id = torch.cat([src, dst]).unique()``,
    ``logits.argmax(-1)``): no graph to cut, so the run would only repeat the conflict."""
    if site.fix != DETACH or not site.code.rstrip().endswith(".detach()"):
        return False
    try:
        expression = ast.parse(site.target, mode="eval").body
    except SyntaxError:
        return False
    if integer_valued(expression):
        return True
    text = ctx.texts.get(site.file)
    name = site.target
    return (text is not None and name.isidentifier() and tensor_method_on_target(site)
            and plain_value_at(text, name, site.line, integer_valued))  # fmt: skip


def kind_of(site: Site) -> FixKind:
    """The kind that renders and explains a site found by the search (clone, out of place)."""
    return next((k for k in KINDS if k.name == site.fix), clone.KIND)


def refusal(kinds: list[FixKind], found: Diagnosis, ctx: Context) -> tuple[str, str]:
    """Why none of the kinds had an edit, and what a person would do instead."""
    reason = next((r for r in (k.refusal(found, ctx) for k in kinds) if r), "")
    advice = next((a for a in (k.advice(found, ctx) for k in kinds) if a), "")
    return reason, advice
