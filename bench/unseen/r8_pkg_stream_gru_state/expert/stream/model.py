import torch.nn as nn


class StatefulForecaster(nn.Module):
    """GRU forecaster that keeps its hidden state between calls, like Keras'
    stateful=True: consecutive windows of the same streams continue each other."""

    def __init__(self, hidden):
        super().__init__()
        self.inp = nn.Linear(1, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.h = None

    def reset_state(self):
        self.h = None

    def forward(self, x):
        if self.h is not None:
            self.h = self.h.detach()     # truncated BPTT: keep the carried value, cut its graph
        out, self.h = self.gru(self.inp(x), self.h)
        return x + self.head(out)        # predict the next value as a delta
