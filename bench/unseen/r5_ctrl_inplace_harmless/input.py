# Recurrent VAE over windows of a long multichannel signal, trained with
# truncated BPTT (the encoder state is carried over and detached in place),
# plus a small graph-pooling readout. Many in-place ops; none breaks autograd.
# Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

C_IN, HID, LAT = 4, 32, 6
WINDOW, STREAMS = 16, 8
N_GROUPS = 3
EPOCHS = 3

t = torch.arange(0, 16 * 20, dtype=torch.float32)
signal = torch.stack([torch.sin(0.07 * t * (k + 1) + 0.3 * s) for s in range(STREAMS) for k in range(C_IN)])
signal = signal.view(STREAMS, C_IN, -1).transpose(1, 2) + 0.05 * torch.randn(STREAMS, t.numel(), C_IN)
group_of_stream = torch.tensor([0, 0, 1, 1, 1, 2, 2, 2])


class RecurrentVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(C_IN, HID, batch_first=True)
        self.to_stats = nn.Linear(HID, 2 * LAT)
        self.dec1 = nn.Linear(LAT, HID)
        self.dec2 = nn.Linear(HID, C_IN)
        self.att = nn.Linear(HID, 1)

    def forward(self, x, h):
        out, h = self.rnn(x, h)
        stats = self.to_stats(out)
        mu, logvar = stats[..., :LAT], stats[..., LAT:]
        std = logvar.mul(0.5).exp_()                 # the old pytorch/examples VAE line
        z = mu + torch.randn_like(std) * std
        d = F.relu(self.dec1(z), inplace=True)       # Linear does not save its output
        recon = self.dec2(d)
        scores = self.att(out).squeeze(-1)           # (B, T)
        scores.masked_fill_(torch.arange(x.size(1)) < 2, float("-inf"))  # ignore warm-up steps
        alpha = torch.softmax(scores, dim=1)
        summary = (alpha.unsqueeze(-1) * out).sum(1)
        return recon, mu, logvar, summary, h


model = RecurrentVAE()
readout = nn.Linear(HID, 1)
opt = torch.optim.Adam(list(model.parameters()) + list(readout.parameters()), lr=3e-3)
group_target = torch.tensor([0.5, -0.2, 0.8])

for epoch in range(EPOCHS):
    h = torch.zeros(1, STREAMS, HID)
    total = 0.0
    n_win = signal.size(1) // WINDOW
    for w in range(n_win):
        x = signal[:, w * WINDOW:(w + 1) * WINDOW]
        recon, mu, logvar, summary, h = model(x, h)
        rec = F.mse_loss(recon, x)
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        pooled = torch.zeros(N_GROUPS, HID)
        pooled.index_add_(0, group_of_stream, summary)      # sum streams per group
        pooled /= torch.bincount(group_of_stream).unsqueeze(1).float()
        grp = F.mse_loss(readout(pooled).squeeze(-1), group_target)
        loss = rec + 0.1 * kl + 0.5 * grp
        opt.zero_grad()
        loss.backward()
        opt.step()
        h.detach_()                                          # truncated BPTT
        with torch.no_grad():
            model.to_stats.bias[LAT:].clamp_(-4.0, 2.0)     # keep initial log-variances sane
        total += loss.item()
    print(f"epoch {epoch} mean loss {total / n_win:.6f} last rec {rec.item():.6f} kl {kl.item():.6f} grp {grp.item():.6f}")

params = list(model.parameters()) + list(readout.parameters())
print(f"checksum {sum(p.double().sum() for p in params).item():.6f}")
