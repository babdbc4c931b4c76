"""Every wording of the autograd errors that torch 2.13 raises is named by its class.

Each case makes real torch raise its message (no message is typed in here), so a torch
that words an error differently fails this test instead of turning a repairable error
into ``not_autograd``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
import torch.nn as nn

from autoclone import classify as cls


class _Ident(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: object, g: torch.Tensor) -> torch.Tensor:
        return g


class _AsIs(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x

    @staticmethod
    def backward(ctx: object, g: torch.Tensor) -> torch.Tensor:
        return g


def _grad_tensor(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, requires_grad=True) * 2  # not a leaf


def _saved_output() -> None:
    y = _grad_tensor(3).sigmoid()
    y.zero_()
    y.sum().backward()


def _saved_input() -> None:
    x = _grad_tensor(3, 3)
    y = x @ x
    x.add_(1)
    y.sum().backward()


def _unbind() -> None:
    a, _ = _grad_tensor(2, 3).unbind(0)
    a.add_(1)


def _split_as_strided() -> None:
    a, _ = _grad_tensor(4).split(2)
    torch.as_strided(a, (2,), (1,)).add_(1)


def _no_grad_view() -> None:
    x = _grad_tensor(3)
    with torch.no_grad():
        v = x[:2]
    v.add_(1)


def _no_grad_view_base() -> None:
    x = _grad_tensor(3)
    with torch.no_grad():
        v = x[:2]
    x.add_(1)
    (v * 2).sum().backward()


def _backward_hook() -> None:
    layer = nn.Linear(3, 3)
    layer.register_full_backward_hook(lambda m, gi, go: None)
    nn.ReLU(inplace=True)(layer(torch.randn(2, 3, requires_grad=True)))


def _custom_view() -> None:
    _Ident.apply(_grad_tensor(3)).add_(1)


def _custom_as_is() -> None:
    _AsIs.apply(_grad_tensor(3)).add_(1)


def _leaf() -> None:
    torch.randn(3, requires_grad=True).add_(1)


def _leaf_view() -> None:
    w = torch.randn(3, 3, requires_grad=True)
    w[:, 0] += 1


def _twice() -> None:
    y = _grad_tensor(3).exp().sum()
    y.backward()
    y.backward()


def _detach_view() -> None:
    for row in torch.stack([_grad_tensor(3) * 2, _grad_tensor(3) * 3]):
        row.detach_()


def _requires_grad_off_computed() -> None:
    (_grad_tensor(3) * 2).requires_grad_(False)


def _inference_tensor_saved() -> None:
    with torch.inference_mode():
        cached = torch.randn(3).cos()
    (_grad_tensor(3) * cached).sum()


def _unused_input() -> None:
    x = torch.randn(3)
    out = (_grad_tensor(3) * x).sum()
    x.requires_grad_()
    torch.autograd.grad(out, x)


def _deepcopy_computed() -> None:
    copy.deepcopy({"weight": _grad_tensor(3) * 2})


def _no_graph() -> None:
    torch.randn(3).sum().backward()


def _hook_no_grad() -> None:
    with torch.no_grad():
        out = _grad_tensor(3) * 2
    out.register_hook(lambda g: g)


class _Once(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: object, g: torch.Tensor) -> torch.Tensor:
        return g * 2


def _once_differentiable() -> None:
    x = torch.ones(3, requires_grad=True)
    y = _Once.apply(x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    g.pow(2).sum().backward()


def _nondiff_argument() -> None:
    x = _grad_tensor(3)
    torch.nn.functional.binary_cross_entropy_with_logits(x, torch.ones(3), weight=x.sigmoid())


def _input_no_grad() -> None:
    torch.autograd.grad((_grad_tensor(3) * torch.randn(3)).sum(), torch.randn(3))


class _Legacy(torch.autograd.Function):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return x * 2


class _TooFew(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * y

    @staticmethod
    def backward(ctx: object, g: torch.Tensor) -> torch.Tensor:
        return g


class _Unreduced(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
        return x * step[:, None]

    @staticmethod
    def backward(ctx: object, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return g, g  # the step's gradient not summed over the broadcast dimension


class _SavesNumber(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.save_for_backward(x, scale)  # type: ignore[attr-defined]
        return x * scale


def _seed_shape() -> None:
    x = _grad_tensor(4, 2)
    torch.autograd.grad((x * 2).sum(1, keepdim=True), x, grad_outputs=torch.ones(4, 2))


def _out_argument() -> None:
    buf = torch.empty(4)
    torch.cat([_grad_tensor(2), _grad_tensor(2)], out=buf)


def _no_derivative() -> None:
    a = torch.randn(4, 3, requires_grad=True)
    d = torch.cdist(a, torch.randn(5, 3))
    (g,) = torch.autograd.grad(d.sum(), a, create_graph=True)
    g.sum().backward()


def _nan_gradient() -> None:
    with torch.autograd.detect_anomaly(check_nan=True):
        (torch.zeros(3, requires_grad=True).sqrt() * 0).sum().backward()


def _numpy_with_grad() -> None:
    _grad_tensor(3).numpy()


def _nonscalar_backward() -> None:
    _grad_tensor(3).backward()


def _transform_mutation() -> None:
    captured = torch.zeros(3)

    def f(x: torch.Tensor) -> torch.Tensor:
        captured.add_(x)
        return x.sum()

    torch.func.grad(f)(torch.randn(3))


def _checkpoint_mismatch() -> None:
    from torch.utils.checkpoint import checkpoint

    calls: list[int] = []

    def block(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)  # a state the block updates itself: another slice when recomputed
        y = x[: len(calls)]
        return y * y

    checkpoint(block, _grad_tensor(4), use_reentrant=False).sum().backward()


def _requires_grad_on_computed() -> None:
    computed = _grad_tensor(3) * 2
    computed.requires_grad = True


def _not_autograd() -> None:
    torch.randn(2, 3) @ torch.randn(2, 3)


CASES: dict[str, tuple[Callable[[], None], str]] = {
    "output saved, written": (_saved_output, cls.INPLACE_VERSION),
    "input saved, written": (_saved_input, cls.INPLACE_VERSION),
    "unbind output written": (_unbind, cls.MULTI_OUTPUT_VIEW),
    "as_strided of a split output written": (_split_as_strided, cls.MULTI_OUTPUT_VIEW),
    "view made under no_grad written": (_no_grad_view, cls.NO_GRAD_VIEW),
    "base of a no_grad view written": (_no_grad_view_base, cls.NO_GRAD_VIEW),
    "BackwardHookFunction output written": (_backward_hook, cls.CUSTOM_FUNCTION_VIEW),
    "custom Function's view written": (_custom_view, cls.CUSTOM_FUNCTION_VIEW),
    "custom Function's input returned as-is, written": (_custom_as_is, cls.CUSTOM_FUNCTION_VIEW),
    "leaf written": (_leaf, cls.LEAF_INPLACE),
    "view of a leaf written": (_leaf_view, cls.LEAF_INPLACE),
    "backward twice": (_twice, cls.BACKWARD_TWICE),
    "a view detached in place": (_detach_view, cls.DETACH_VIEW),
    "requires_grad off on a computed tensor": (
        _requires_grad_off_computed,
        cls.NONLEAF_REQUIRES_GRAD,
    ),
    "requires_grad on for a computed tensor": (
        _requires_grad_on_computed,
        cls.NONLEAF_REQUIRES_GRAD,
    ),
    "seed of another shape than its output": (_seed_shape, cls.SEED_SHAPE),
    "out= given a tensor that requires grad": (_out_argument, cls.OUT_ARGUMENT),
    "no double-backward derivative": (_no_derivative, cls.NO_DERIVATIVE),
    "NaN from a backward function": (_nan_gradient, cls.NAN_GRADIENT),
    "numpy() with a graph": (_numpy_with_grad, cls.NUMPY_WITH_GRAD),
    "backward on a vector": (_nonscalar_backward, cls.NONSCALAR_BACKWARD),
    "a transform writes a captured tensor": (_transform_mutation, cls.TRANSFORM_MUTATION),
    "a checkpointed block recomputed otherwise": (_checkpoint_mismatch, cls.CHECKPOINT_MISMATCH),
    "no graph": (_no_graph, cls.NO_GRAPH),
    "inference tensor saved": (_inference_tensor_saved, cls.INFERENCE_TENSOR),
    "gradient of an input set after the forward": (_unused_input, cls.UNUSED_INPUT),
    "deepcopy of a computed tensor": (_deepcopy_computed, cls.NONLEAF_DEEPCOPY),
    "gradient of an input that does not require grad": (_input_no_grad, cls.INPUT_NO_GRAD),
    "hook on a tensor made under no_grad": (_hook_no_grad, cls.HOOK_NO_GRAD),
    "a weight that requires grad": (_nondiff_argument, cls.NONDIFF_ARGUMENT),
    "once_differentiable, twice": (_once_differentiable, cls.ONCE_DIFFERENTIABLE),
    "old-style Function": (lambda: _Legacy()(_grad_tensor(3)), cls.CUSTOM_FUNCTION),
    "Function backward returns too few gradients": (
        lambda: _TooFew.apply(_grad_tensor(3), _grad_tensor(3)).sum().backward(),
        cls.CUSTOM_FUNCTION,
    ),
    "Function backward returns an unreduced gradient": (
        lambda: _Unreduced.apply(_grad_tensor(4, 3), _grad_tensor(4)).sum().backward(),
        cls.CUSTOM_FUNCTION,
    ),
    "Function saves a number": (
        lambda: _SavesNumber.apply(_grad_tensor(3), 2.0),
        cls.CUSTOM_FUNCTION,
    ),
    "shape mismatch": (_not_autograd, cls.NOT_AUTOGRAD),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_wording_torch_raises_is_named(case: str) -> None:
    raise_it, expected = CASES[case]
    with pytest.raises((RuntimeError, TypeError)) as caught:
        raise_it()
    assert cls.classify(str(caught.value)) == expected, str(caught.value)
