"""Hooks attached to ProbeMLP without touching the model code."""
import torch


class NoiseInjector:
    """forward_pre_hook: Gaussian noise on a layer's input while training."""

    def __init__(self, std, seed):
        self.std = std
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self, module, inputs):
        if not module.training or self.std == 0:
            return None
        x = inputs[0]
        noise = torch.randn(x.shape, generator=self.gen) * self.std
        return (x + noise,)


class ActivationTracker:
    """forward_hook: collects mean |activation| per layer for an L1 sparsity penalty."""

    def __init__(self):
        self.cache = {}
        self.handles = []

    def attach(self, named_modules):
        for name, mod in named_modules:
            self.handles.append(mod.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            if module.training:
                self.cache[name] = self.cache.get(name, 0.0) + output.abs().mean()
        return hook

    def penalty(self):
        return sum(self.cache.values())

    def reset(self):
        self.cache = {}


def install(model, cfg, seed):
    injectors = []
    for i, blk in enumerate(model.blocks):
        inj = NoiseInjector(cfg["hooks"]["noise_std"], seed + i)
        blk.fc2.register_forward_pre_hook(inj)
        injectors.append(inj)
    tracker = ActivationTracker()
    tracker.attach((f"blocks.{i}.act2", blk.act2) for i, blk in enumerate(model.blocks))
    return injectors, tracker
