"""A small LoRA implementation in the style of loralib: the low-rank update is merged into the
frozen weight when the module is put in eval mode and removed again in train mode."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int = 4, alpha: float = 8.0):
        super().__init__()
        self.base = base
        self.r = r
        self.scaling = alpha / r
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.merged = False

    def delta_weight(self):
        return (self.lora_B @ self.lora_A) * self.scaling

    def train(self, mode: bool = True):
        super().train(mode)
        if mode and self.merged:
            self.base.weight.sub_(self.delta_weight())
            self.merged = False
        elif not mode and not self.merged:
            self.base.weight.add_(self.delta_weight())
            self.merged = True
        return self

    def forward(self, x):
        out = self.base(x)
        if not self.merged:
            out = out + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scaling
        return out


def inject_lora(model: nn.Module, target_names=("q_proj", "v_proj"), r=4, alpha=8.0):
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name in target_names and isinstance(child, nn.Linear):
                setattr(module, name, LoRALinear(child, r=r, alpha=alpha))
    return model


def lora_parameters(model: nn.Module):
    return [p for n, p in model.named_parameters() if "lora_" in n]
