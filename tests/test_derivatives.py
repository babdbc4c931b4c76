"""Whether a derivative taken without ``create_graph`` is used as constant weights.

The calls are fed to ``Derived.spread`` as the tracer feeds them, on real tensors: a
saliency weighting a feature penalty stays a weight while the loss is linear in the
weighted term (a mean, a sum with other terms, a log of its value); a PDE residual that
multiplies the net's output by its derivative and is then squared fits the derivative.
"""

from __future__ import annotations

from typing import Any

import torch

from autoclone.derivatives import Derived, GradCalls


def _call(derived: Derived, name: str, fn: Any, *args: Any) -> Any:
    out = fn(*args)
    derived.spread(name, args, {}, out)
    return out


def _derivative() -> tuple[Derived, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    feats = torch.rand(8, 4, requires_grad=True)
    grad = torch.rand(8, 4)  # what autograd.grad returns without create_graph: no graph
    derived = Derived()
    derived.add([grad])
    return derived, grad, feats


def test_a_saliency_weighting_a_penalty_is_a_weight() -> None:
    derived, grad, feats = _derivative()
    sal = _call(derived, "abs", torch.abs, grad)
    square = feats.pow(2)
    term = _call(derived, "__mul__", torch.mul, sal, square)
    penalty = _call(derived, "mean", torch.mean, term)
    _call(derived, "__add__", torch.add, penalty, feats.sum())
    penalty.item()  # logged: not a call with a graph
    assert derived.weights


def test_a_residual_squared_fits_the_derivative() -> None:
    derived, grad, u = _derivative()
    u_x = _call(derived, "__getitem__", lambda t, i: t[i], grad, 0)
    product = _call(derived, "__mul__", torch.mul, u[0], u_x)
    residual = _call(derived, "__add__", torch.add, product, u_x)
    assert derived.weights  # so far a weighted term, linear in its weights
    _call(derived, "pow", torch.pow, residual, 2)
    assert not derived.weights


def test_a_scalar_derivative_scaling_a_term_is_not_taken_for_weights() -> None:
    """One number is as often a fitted penalty scaled by a learned coefficient."""
    derived, grad, feats = _derivative()
    norm = _call(derived, "norm", torch.norm, grad)
    _call(derived, "__mul__", torch.mul, norm, feats.sum())
    assert not derived.weights


def _freed_graph() -> tuple[GradCalls, torch.Tensor, torch.Tensor]:
    """A decoder's output read by two losses; the derivative of the first, taken with
    neither flag, freed the graph the second reads (VQGAN's adaptive weight)."""
    torch.manual_seed(0)
    weight = torch.rand(4, 4, requires_grad=True)
    rec = torch.tanh(torch.rand(8, 4) @ weight)
    nll = rec.abs().mean()
    calls = GradCalls()
    outputs = torch.autograd.grad(nll, weight)
    calls.called({}, outputs, nll, 0, list)
    return calls, outputs[0], rec


def test_a_number_from_the_derivative_scaling_a_term_of_the_freed_graph_is_a_weight() -> None:
    calls, grad, rec = _freed_graph()
    derived = calls.derived
    d_weight = _call(derived, "norm", torch.norm, grad)
    g_loss = -rec.mean()  # reads the graph the call freed
    scaled = _call(derived, "__mul__", torch.mul, d_weight, g_loss)
    _call(derived, "__add__", torch.add, scaled, rec.pow(2).mean())
    assert derived.weights


def test_a_learned_coefficient_of_a_number_from_the_derivative_is_not_a_weight() -> None:
    """``lam * r1``: the coefficient's graph is its own, so the penalty stays fitted."""
    calls, grad, _ = _freed_graph()
    derived = calls.derived
    penalty = _call(derived, "pow", torch.pow, _call(derived, "norm", torch.norm, grad), 2)
    log_lam = torch.zeros((), requires_grad=True)
    _call(derived, "__mul__", torch.mul, log_lam.exp(), penalty)
    assert not derived.weights
