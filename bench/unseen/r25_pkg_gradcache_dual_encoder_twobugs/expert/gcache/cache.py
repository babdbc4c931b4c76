"""Gradient cache: large-batch contrastive loss with chunk-sized activation memory.

1. encode every chunk without building a graph,
2. compute the full-batch loss on the representations and cache d loss / d rep,
3. re-encode chunk by chunk with grad and back-propagate the cached gradients
   through a surrogate ``<rep, cached_grad>``.
"""
import torch


class GradCache:
    def __init__(self, model, loss_fn, chunk_size):
        self.model = model
        self.loss_fn = loss_fn
        self.chunk_size = chunk_size

    def encode_no_grad(self, tower, x):
        with torch.no_grad():
            return torch.cat([tower(c) for c in x.split(self.chunk_size)])

    def build_cache(self, q_reps, d_reps):
        q_reps, d_reps = q_reps.detach().requires_grad_(), d_reps.detach().requires_grad_()
        loss = self.loss_fn(q_reps, d_reps)
        loss.backward()
        return q_reps.grad, d_reps.grad, loss.detach()

    def forward_backward(self, tower, x, cached_grad):
        for xc, gc in zip(x.split(self.chunk_size), cached_grad.split(self.chunk_size)):
            reps = tower(xc)
            surrogate = torch.dot(reps.flatten(), gc.flatten())
            surrogate.backward()

    def step(self, xq, xd):
        q_reps = self.encode_no_grad(self.model.query, xq)
        d_reps = self.encode_no_grad(self.model.doc, xd)
        gq, gd, loss = self.build_cache(q_reps, d_reps)
        self.forward_backward(self.model.query, xq, gq)
        self.forward_backward(self.model.doc, xd, gd)
        return loss
