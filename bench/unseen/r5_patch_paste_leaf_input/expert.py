# Adversarial patch against a small (pre-trained here) 2-D CNN: a square patch is
# pasted at a random location of every image and optimised to push the model
# towards a target class. We also log an input-saliency number (mean |d loss /
# d image| outside the patch) for the report. Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N, S, N_CLASSES, P = 64, 16, 4, 7
TARGET = 2
STEPS = 40

# synthetic "images": class = orientation of a stripe pattern
cls = torch.randint(0, N_CLASSES, (N,))
yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
angles = cls.float() * (torch.pi / N_CLASSES)
images = torch.sin(0.9 * (xx * torch.cos(angles)[:, None, None] + yy * torch.sin(angles)[:, None, None]))
images = (images + 0.3 * torch.randn(N, S, S)).unsqueeze(1)

model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(16, N_CLASSES))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(30):
    loss = F.cross_entropy(model(images), cls)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"clean loss {loss.item():.6f}")
model.eval()
for p in model.parameters():
    p.requires_grad_(False)


def paste(batch, patch, rows, cols):
    """Write the patch into each image at (row, col)."""
    batch = batch.clone()  # do not write into the caller's (leaf) images
    for i, (r, c) in enumerate(zip(rows.tolist(), cols.tolist())):
        batch[i, :, r:r + P, c:c + P] = patch
    return batch


patch = torch.zeros(1, P, P, requires_grad=True)
patch_opt = torch.optim.Adam([patch], lr=0.1)
images.requires_grad_(True)  # for the saliency log
target = torch.full((N,), TARGET)

for step in range(STEPS):
    rows = torch.randint(0, S - P + 1, (N,))
    cols = torch.randint(0, S - P + 1, (N,))
    adv = paste(images, patch, rows, cols)
    loss = F.cross_entropy(model(adv), target)
    patch_opt.zero_grad()
    images.grad = None
    loss.backward()
    patch_opt.step()
    with torch.no_grad():
        patch.clamp_(-3.0, 3.0)
    saliency = images.grad.abs().mean().item()
    if step % 5 == 0 or step == STEPS - 1:
        hit = (model(adv).argmax(1) == TARGET).float().mean().item()
        print(f"step {step:2d} loss {loss.item():.6f} target-rate {hit:.4f} saliency {saliency:.6f}")

print(f"patch checksum {patch.double().sum().item():.6f}")
