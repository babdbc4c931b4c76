import math

import torch
import torch.nn as nn

from .sparsemax import sparsemax


class GBN(nn.Module):
    """Ghost Batch Normalization (https://arxiv.org/abs/1705.08741)."""

    def __init__(self, input_dim, virtual_batch_size=64, momentum=0.02):
        super().__init__()
        self.virtual_batch_size = virtual_batch_size
        self.bn = nn.BatchNorm1d(input_dim, momentum=momentum)

    def forward(self, x):
        if not self.training or x.shape[0] <= self.virtual_batch_size:
            return self.bn(x)
        chunks = x.chunk(math.ceil(x.shape[0] / self.virtual_batch_size), 0)
        return torch.cat([self.bn(x_) for x_ in chunks], dim=0)


class GLUBlock(nn.Module):
    def __init__(self, input_dim, output_dim, shared_fc=None, virtual_batch_size=64):
        super().__init__()
        self.output_dim = output_dim
        self.fc = shared_fc if shared_fc is not None else nn.Linear(input_dim, 2 * output_dim, bias=False)
        self.bn = GBN(2 * output_dim, virtual_batch_size)

    def forward(self, x):
        x = self.bn(self.fc(x))
        return x[:, :self.output_dim] * torch.sigmoid(x[:, self.output_dim:])


class FeatTransformer(nn.Module):
    """One shared GLU block followed by one step-specific GLU block."""

    def __init__(self, input_dim, output_dim, shared_fc, virtual_batch_size=64):
        super().__init__()
        self.shared = GLUBlock(input_dim, output_dim, shared_fc, virtual_batch_size)
        self.specific = GLUBlock(output_dim, output_dim, None, virtual_batch_size)
        self.scale = math.sqrt(0.5)

    def forward(self, x):
        x = self.shared(x)
        return (x + self.specific(x)) * self.scale


class AttentiveTransformer(nn.Module):
    def __init__(self, input_dim, output_dim, virtual_batch_size=64):
        super().__init__()
        self.fc = nn.Linear(input_dim, output_dim, bias=False)
        self.bn = GBN(output_dim, virtual_batch_size)

    def forward(self, priors, processed_feat):
        x = self.bn(self.fc(processed_feat))
        x = torch.mul(x, priors)
        return sparsemax(x, dim=-1)
