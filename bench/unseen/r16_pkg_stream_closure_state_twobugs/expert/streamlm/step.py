import torch
import torch.nn.functional as F


def make_train_step(model, opt, cfg):
    """Returns a closure that trains on one segment and carries the GRU state
    to the next segment of the same streams."""
    h = None
    decay = 1.0 - cfg.lr * cfg.wd

    def step(x, y):
        nonlocal h
        if h is not None:
            h = h.detach()  # truncated BPTT: keep the state's value, not its graph
        logits, h = model(x, h)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        # decoupled weight decay (AdamW-style), applied after the Adam update
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(decay)
        return loss.item()

    return step
