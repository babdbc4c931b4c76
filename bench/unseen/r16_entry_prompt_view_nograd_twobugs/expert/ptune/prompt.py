import torch
import torch.nn as nn


class MultiTaskPrompt(nn.Module):
    """Soft prompt of a task = shared prompt + task-specific offset."""

    def __init__(self, n_tasks, n_tok, d):
        super().__init__()
        self.shared = nn.Parameter(0.5 * torch.randn(n_tok, d))
        self.task_delta = nn.Parameter(torch.zeros(n_tasks, n_tok, d))

    def forward(self, task_id, batch):
        p = self.task_delta[task_id] + self.shared
        return p.unsqueeze(0).expand(batch, -1, -1)
