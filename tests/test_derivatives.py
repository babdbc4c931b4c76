"""Whether a derivative taken without ``create_graph`` is used as constant weights.

The calls are fed to ``Derived.spread`` as the tracer feeds them, on real tensors: a
saliency weighting a feature penalty stays a weight while the loss is linear in the
weighted term (a mean, a sum with other terms, a log of its value); a PDE residual that
multiplies the net's output by its derivative and is then squared fits the derivative.
"""

from __future__ import annotations

from typing import Any

import torch

from autoclone.derivatives import Derived


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
