"""Fake-quantization primitives with a straight-through estimator (STE)."""
import torch


def round_ste(x):
    """Round in the forward pass, identity gradient in the backward pass."""
    return x + (x.round() - x).detach()


def fake_quant_affine(x, scale, zero_point, qmin, qmax):
    """Quantize-dequantize ``x``; gradients flow to ``x`` (STE) and to ``scale``."""
    q = torch.clamp(round_ste(x / scale) + zero_point, qmin, qmax)
    return (q - zero_point) * scale


def weight_scale(w, bits):
    """Per-output-channel symmetric scale computed from the live weights (max-abs scaling)."""
    qmax = 2 ** (bits - 1) - 1
    scale = w.abs().amax(dim=1, keepdim=True)
    return (scale / qmax).clamp(min=1e-8)


def fake_quant_weight(w, bits):
    qmax = 2 ** (bits - 1) - 1
    scale = weight_scale(w, bits)
    return fake_quant_affine(w, scale, 0.0, -qmax, qmax)
