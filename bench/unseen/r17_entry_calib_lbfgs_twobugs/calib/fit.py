import torch
import torch.nn.functional as F

from .scaling import VectorScaling, project_positive_


def expected_calibration_error(logits, labels, n_bins=10):
    probs = logits.softmax(dim=1)
    conf, pred = probs.max(dim=1)
    correct = (pred == labels).float()
    edges = torch.linspace(0, 1, n_bins + 1)
    ece = torch.zeros(())
    for lo, hi in zip(edges[:-1], edges[1:]):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            ece += in_bin.float().mean() * (conf[in_bin].mean() - correct[in_bin].mean()).abs()
    return ece.item()


def fit_vector_scaling(logits, labels, rounds=5, max_iter=20, lr=1.0):
    """Fit the calibration head on held-out logits with L-BFGS; after every
    L-BFGS call the scales are projected back onto the feasible set."""
    head = VectorScaling(logits.shape[1])
    optimizer = torch.optim.LBFGS(head.parameters(), lr=lr, max_iter=max_iter,
                                  line_search_fn="strong_wolfe")
    scaled = head(logits)

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(scaled, labels)
        loss.backward()
        return loss

    for _ in range(rounds):
        optimizer.step(closure)
        project_positive_(head)
    return head
