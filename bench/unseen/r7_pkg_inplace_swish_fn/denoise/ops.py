import torch


class SwishInplace(torch.autograd.Function):
    """Memory-saving swish: overwrites its input instead of allocating an output,
    keeps only one tensor for the backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x.mul_(torch.sigmoid(x))
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * (s * (1 + x * (1 - s)))


swish = SwishInplace.apply
