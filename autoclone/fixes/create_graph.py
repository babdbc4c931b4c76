"""``create_graph=True`` in a ``torch.autograd.grad`` call that freed the graph the loss
then reads again: a PDE residual ``u_t + u * u_x - nu * u_xx`` whose ``u_t`` was taken
without it, next to ``u_x`` and ``u_xx`` taken with it.

Two programs run where the script fails: ``create_graph=True`` makes the derivative part
of the graph, so the loss trains through it; ``retain_graph=True`` keeps the buffers and
leaves the derivative a constant, a term that trains nothing through itself. Only the
script can say which it means, so this kind offers the edit where another
``torch.autograd.grad`` call in the same function already passes ``create_graph=True``
(the program differentiates its derivatives), or where the failing loss was computed
from the derivative's value (forces ``-dE/dx`` fitted to targets: the traced run follows
the derivative by value, ``autoclone.derivatives``). Where the program uses the
derivative as a constant (per-element weights, or a value the loss never reads),
``retain_derivative`` offers ``retain_graph=True`` instead; otherwise the report names
both. Also where the loss has no graph at all because it reads the parameters only
through such a derivative (a Hamiltonian net fitted to ``dH/dx``, a potential's field):
there ``retain_graph=True`` cannot help. Judged like a cut: K finite steps, nothing the
original differentiated left without a gradient.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE, NO_GRAPH, UNUSED_INPUT
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, keyword_appended
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.parsed import innermost, parsed

KIND_NAME = "create_graph"


def is_grad_call(node: ast.AST) -> bool:
    """``torch.autograd.grad(...)``, ``autograd.grad(...)`` or ``grad(...)``."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) in (
        "torch.autograd.grad", "autograd.grad", "grad")  # fmt: skip


def grad_calls(node: ast.AST) -> list[ast.Call]:
    """The ``torch.autograd.grad`` calls under ``node``."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and is_grad_call(n)]


def _creates(call: ast.Call) -> bool:
    keyword = next((k.value for k in call.keywords if k.arg == "create_graph"), None)
    return isinstance(keyword, ast.Constant) and keyword.value is True


def freeing_call(
    found: Diagnosis, texts: Mapping[str, str]
) -> tuple[str, str, ast.Call, bool] | None:
    """The ``torch.autograd.grad`` call that freed the graph (file, its text, the call),
    and whether a sibling call in its function passes ``create_graph=True`` (the program
    differentiates its derivatives); None where the line holds no one such call."""
    if found.grad_call is None:
        return None
    file, line = found.grad_call
    text = texts.get(file, "")
    try:
        scope = innermost(text, line, FUNCTIONS) or parsed(text)
    except SyntaxError:
        return None
    calls = grad_calls(scope)
    mine = [c for c in calls if c.lineno <= line <= (c.end_lineno or c.lineno)]
    if len(mine) != 1:
        return None
    return file, text, mine[0], any(_creates(c) for c in calls if c is not mine[0])


def create_graph_site(found: Diagnosis, texts: Mapping[str, str]) -> Site | None:
    """``, create_graph=True`` at the end of the freeing call's arguments, when a sibling
    call in its function passes it already, or when the failing loss was computed from
    the derivative's value (forces fitted as ``-dE/dx``: ``derivative_in_loss``)."""
    call = freeing_call(found, texts)
    if call is None or not (call[3] or found.derivative_in_loss):
        return None
    return keyword_site(call[0], call[1], call[2])


def earlier_sites(found: Diagnosis, texts: Mapping[str, str]) -> list[Site]:
    """``, create_graph=True`` at each ``torch.autograd.grad`` call above the failing one in
    its function that passes neither flag: where the failing call differentiates with
    respect to a tensor the outputs reach only through those derivatives (a meta-learning
    virtual step ``params - lr * grads``, reweighting examples by ``eps``), a derivative
    taken without a graph is a constant, and the input looks unused."""
    if found.error_class != UNUSED_INPUT or found.failing is None:
        return []
    file, line = found.failing
    text = texts.get(file, "")
    try:
        scope = innermost(text, line, FUNCTIONS)
    except SyntaxError:
        return []
    if scope is None:
        return []
    calls = [c for c in grad_calls(scope) if (c.end_lineno or c.lineno) < line]
    sites = [keyword_site(file, text, c) for c in calls]
    return [site for site in sites if site is not None]


def keyword_site(file: str, text: str, call: ast.Call, keyword: str = "create_graph",
                 fix: str = KIND_NAME) -> Site | None:  # fmt: skip
    """``, {keyword}=True`` at the end of ``call``'s arguments, unless it passes a flag."""
    if any(k.arg in ("create_graph", "retain_graph") or k.arg is None for k in call.keywords):
        return None
    return keyword_appended(file, text, call, keyword, "True", fix)


class CreateGraph(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class == UNUSED_INPUT:
            return bool(earlier_sites(found, ctx.texts))
        if found.error_class == NO_GRAPH:
            return found.derivative_in_loss and found.grad_call is not None
        return found.error_class == BACKWARD_TWICE and found.grad_call is not None

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        if found.error_class == UNUSED_INPUT:  # every earlier call together, then each
            sites = earlier_sites(found, ctx.texts)
            sets = [sites] if len(sites) > 1 else []
            return ranked([*sets, *([s] for s in sites)])
        site = create_graph_site(found, ctx.texts)
        return ranked([[site]], start=-2.0) if site is not None else []

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        at = where(found.grad_call, ctx.lines) if found.grad_call else "torch.autograd.grad"
        return (
            f"torch.autograd.grad at {at} freed the graph the loss reads again; pass "
            "create_graph=True if the derivative is part of what the loss trains (a PDE "
            "residual, a gradient penalty), or retain_graph=True if it is a constant: a "
            "choice about training that autoclone leaves to you"
        )

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if found.error_class == UNUSED_INPUT:
            return (
                f"Fix at {where((site.file, site.line), lines)}: `create_graph=True`: "
                "without it the derivative is a constant, so the outputs the later "
                "torch.autograd.grad call differentiates reach its input only through "
                "constants; with it the derivative is part of the graph and the input is used."
            )
        why = ("the loss at " + where(found.failing, lines) + " is computed from its value"
               if found.derivative_in_loss and found.failing else
               "as the other torch.autograd.grad calls of its function make theirs")
        return (
            f"Fix at {where((site.file, site.line), lines)}: `create_graph=True`: the "
            f"derivative becomes part of the graph ({why}), so the graph it goes through "
            "is kept and the loss trains through the derivative."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        if found.error_class == UNUSED_INPUT:
            return [
                "this changes what is differentiated: the later gradient now flows through "
                "the derivative (second-order terms), the only way it reaches that input"
            ]
        if found.error_class == NO_GRAPH:
            return [
                "this changes what is differentiated: the loss now trains through the "
                "derivative (second-order terms), the only way it reaches the parameters"
            ]
        return [
            "this changes what is differentiated: the loss now trains through the "
            "derivative (retain_graph=True would also remove the error and leave the "
            "derivative a constant)"
        ]


KIND = CreateGraph()
