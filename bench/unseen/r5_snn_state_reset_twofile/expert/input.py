# Spiking network (LIF neurons, surrogate gradients) classifying rate-coded
# patterns, trained with cross-entropy on output spike counts. Run: python input.py
import torch
import torch.nn.functional as F

from models import SNN

torch.manual_seed(0)

T, N_IN, N_HIDDEN, N_OUT = 12, 20, 48, 3
N, BATCH, EPOCHS = 96, 16, 3

prototypes = torch.rand(N_OUT, N_IN)
labels = torch.randint(0, N_OUT, (N,))
rates = (prototypes[labels] * 0.8 + 0.2 * torch.rand(N, N_IN)).clamp(0, 1)
spikes_in = (torch.rand(T, N, N_IN) < rates).float()  # Bernoulli rate coding

net = SNN(N_IN, N_HIDDEN, N_OUT)
opt = torch.optim.Adam(net.parameters(), lr=5e-3)

for epoch in range(EPOCHS):
    perm = torch.randperm(N)
    correct = 0
    for b in range(0, N, BATCH):
        idx = perm[b:b + BATCH]
        net.reset()  # every sample starts from a resting membrane
        counts = net(spikes_in[:, idx])
        loss = F.cross_entropy(counts, labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        correct += (counts.argmax(1) == labels[idx]).sum().item()
        if b // BATCH < 3 or b + BATCH >= N:
            print(f"epoch {epoch} batch {b // BATCH} loss {loss.item():.6f} "
                  f"spikes {counts.sum().item():.0f}")
    print(f"epoch {epoch} acc {correct / N:.4f}")

print(f"checksum {sum(p.double().sum() for p in net.parameters()).item():.6f}")
