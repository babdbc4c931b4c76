import torch
import torch.nn as nn

torch.manual_seed(11)

# predict the next value of a noisy sine wave, truncated BPTT with an LSTM
t = torch.arange(0, 400, dtype=torch.float32)
series = torch.sin(t * 0.1) + 0.05 * torch.randn_like(t)


class Forecaster(nn.Module):
    def __init__(self, hidden=20):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, state=None):
        y, state = self.lstm(x, state)
        return self.out(y), state


model = Forecaster()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
window = 20
state = (torch.zeros(1, 1, 20), torch.zeros(1, 1, 20))
for i in range(0, 380, window):
    x = series[i:i + window].view(1, window, 1)
    y = series[i + 1:i + window + 1].view(1, window, 1)
    pred, state = model(x, state)
    loss = ((pred - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"chunk {i // window:2d} loss {loss.item():.6f}")
