"""Fused-style attention softmax, written as a custom autograd.Function.

Like Megatron's `ScaledMaskedSoftmax`, the forward scales and masks the scores and saves only
the softmax *output*; the backward uses the standard softmax Jacobian-vector product.
"""
import torch


class ScaledMaskedSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, pad_mask, scale):
        # scale and mask in place to avoid allocating another (B*H, L, L) buffer
        scores.mul_(scale)
        scores.masked_fill_(pad_mask, -1e4)
        probs = torch.softmax(scores, dim=-1)
        ctx.save_for_backward(probs)
        ctx.scale = scale
        return probs

    @staticmethod
    def backward(ctx, grad_probs):
        probs, = ctx.saved_tensors
        grad_scores = probs * (grad_probs - (grad_probs * probs).sum(-1, keepdim=True))
        return grad_scores * ctx.scale, None, None


scaled_masked_softmax = ScaledMaskedSoftmax.apply
