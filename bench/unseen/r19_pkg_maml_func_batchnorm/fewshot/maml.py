import torch.nn.functional as F
from torch.func import functional_call, grad


def inner_loss(params, model, x, y):
    return F.cross_entropy(functional_call(model, params, (x,)), y)


def adapt(model, params, x, y, steps, lr):
    """Inner loop: a few SGD steps on the support set, differentiable w.r.t. `params`."""
    fast = dict(params)
    for _ in range(steps):
        g = grad(inner_loss)(fast, model, x, y)
        fast = {name: w - lr * g[name] for name, w in fast.items()}
    return fast


def query_logits(model, params, x):
    return functional_call(model, params, (x,))
