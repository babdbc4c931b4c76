import torch
import torch.nn.functional as F


def right_for_right_reasons(model, x, y, mask):
    """Ross et al. 2017: cross-entropy plus a penalty on input gradients of the log-probabilities
    inside the annotated 'irrelevant' region (mask == 1)."""
    x = x.clone().requires_grad_(True)
    logits = model(x)
    ce = F.cross_entropy(logits, y)
    log_probs = F.log_softmax(logits, dim=1)
    input_grads = torch.autograd.grad(log_probs.sum(), x)[0]
    right_reasons = (mask * input_grads).pow(2).sum() / x.shape[0]
    return ce, right_reasons
