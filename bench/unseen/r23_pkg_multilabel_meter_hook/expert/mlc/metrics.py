import torch


class MultiLabelMeter:
    """Captures the head's logits with a forward hook and keeps running micro-F1."""

    def __init__(self, threshold=0.5):
        self.threshold = threshold
        self._last = None
        self.tp = self.fp = self.fn = 0.0

    def attach(self, module):
        return module.register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self._last = output

    @torch.no_grad()
    def update(self, targets):
        probs = self._last.detach().sigmoid()
        pred = (probs > self.threshold).float()
        self.tp += (pred * targets).sum().item()
        self.fp += (pred * (1 - targets)).sum().item()
        self.fn += ((1 - pred) * targets).sum().item()
        return probs.mean().item()

    def f1(self):
        return 2 * self.tp / max(2 * self.tp + self.fp + self.fn, 1.0)
