# Stateful LSTM forecaster trained with truncated BPTT on one long multivariate
# series: the state is carried from one window to the next and cut from the graph
# after every update. Run: python input.py
import torch
import torch.nn as nn

torch.manual_seed(0)

N_FEATURES = 3
HIDDEN = 24
WINDOW = 20
BATCH = 4          # 4 parallel streams
EPOCHS = 3

t = torch.arange(0, 1200, dtype=torch.float32)
streams = []
for b in range(BATCH):
    phase = 0.7 * b
    s = torch.stack([torch.sin(0.05 * t + phase),
                     torch.cos(0.031 * t + phase),
                     torch.sin(0.013 * t) * torch.cos(0.07 * t + phase)], dim=-1)
    streams.append(s + 0.05 * torch.randn_like(s))
series = torch.stack(streams)  # (BATCH, T, N_FEATURES)


class StatefulForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(N_FEATURES, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, N_FEATURES)
        self.state = None

    def reset_state(self):
        self.state = None

    def detach_state(self):
        # truncate BPTT: keep the values, drop the history
        h, c = self.state
        self.state = (h.detach(), c.detach())

    def forward(self, x):
        out, self.state = self.lstm(x, self.state)
        return self.head(out)


model = StatefulForecaster()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
loss_fn = nn.MSELoss()

n_windows = (series.size(1) - 1) // WINDOW
for epoch in range(EPOCHS):
    model.reset_state()
    total = 0.0
    for w in range(n_windows):
        x = series[:, w * WINDOW:(w + 1) * WINDOW]
        y = series[:, w * WINDOW + 1:(w + 1) * WINDOW + 1]
        pred = model(x)
        loss = loss_fn(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.detach_state()
        total += loss.item()
        if epoch == 0 and w < 4:
            print(f"epoch {epoch} window {w} loss {loss.item():.6f}")
    print(f"epoch {epoch} mean loss {total / n_windows:.6f}")

checksum = sum(p.double().sum() for p in model.parameters()).item()
print(f"checksum {checksum:.6f}")
