import torch
import torch.nn as nn
import torch.nn.functional as F


class ExpertFFN(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class MoE(nn.Module):
    """Top-1 token-choice MoE with auxiliary-loss-free load balancing (DeepSeek-V3 style):
    a per-expert bias shifts the routing scores and is nudged towards balanced load."""

    def __init__(self, dim, hidden, num_experts, bias_update_rate):
        super().__init__()
        self.num_experts = num_experts
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList(ExpertFFN(dim, hidden) for _ in range(num_experts))
        self.bias_update_rate = bias_update_rate
        self.register_buffer("expert_bias", torch.zeros(num_experts))
        self.register_buffer("tokens_per_expert", torch.zeros(num_experts))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        scores = torch.sigmoid(self.router(x))
        choice = (scores + self.expert_bias).argmax(dim=-1)
        gate = scores.gather(1, choice.unsqueeze(1))
        counts = torch.bincount(choice, minlength=self.num_experts).float()
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            idx = (choice == e).nonzero(as_tuple=True)[0]
            if idx.numel() == 0:
                continue
            out = out.index_add(0, idx, gate[idx] * expert(x[idx]))
        if self.training:
            with torch.no_grad():
                self.tokens_per_expert.copy_(counts)
                self.expert_bias += self.bias_update_rate * torch.sign(counts.mean() - counts)
        return out.reshape(shape)
