import torch
import torch.nn as nn

from .neurons import LIF


class SpikingMLP(nn.Module):
    def __init__(self, n_inputs, hidden, n_classes, beta, threshold, slope):
        super().__init__()
        self.fc1 = nn.Linear(n_inputs, hidden)
        self.lif1 = LIF(beta, threshold, slope)
        self.fc2 = nn.Linear(hidden, n_classes)
        self.lif2 = LIF(beta, threshold, slope)

    def reset_state(self):
        for m in self.modules():
            if isinstance(m, LIF):
                m.reset_state()

    def forward(self, spikes):
        """spikes: [B, T, n_inputs] input spike trains -> output spikes [T, B, C], hidden rate."""
        out_spikes = []
        hidden_rate = 0.0
        for t in range(spikes.shape[1]):
            h, _ = self.lif1(self.fc1(spikes[:, t]))
            o, _ = self.lif2(self.fc2(h))
            out_spikes.append(o)
            hidden_rate = hidden_rate + h.mean()
        return torch.stack(out_spikes), hidden_rate / spikes.shape[1]
