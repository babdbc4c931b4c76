# PGD adversarial attack through a preprocessing pipeline whose Normalize transform works
# in place, channel by channel (the torchvision-style `t.sub_(m).div_(s)`). Based on
# https://github.com/paarthneekhara/AdversarialDeepFakes/issues/23 and
# https://github.com/haofanwang/Score-CAM/issues/28 ("Output 0 of UnbindBackward0 is a view
# and is being modified inplace" from `t.sub_(m).div_(s)` / `channel.mul_(std).add_(mean)`).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(31)


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean)
        self.std = torch.tensor(std)

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)
        return tensor


norm_transform = Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


def preprocess(img):
    resized = F.interpolate(img.unsqueeze(0), size=(16, 16), mode="bilinear", align_corners=False)[0]
    return norm_transform(resized)


model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(16, 2),
)
model.eval()
images = torch.rand(6, 3, 24, 24)
with torch.no_grad():
    labels = model(torch.stack([preprocess(im.clone()) for im in images])).argmax(1)

eps, alpha = 8 / 255, 2 / 255
x_adv = images.clone()
for step in range(8):
    x_adv.requires_grad_(True)
    logits = model(torch.stack([preprocess(im) for im in x_adv]))
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    with torch.no_grad():
        x_adv = x_adv + alpha * x_adv.grad.sign()
        x_adv = torch.min(torch.max(x_adv, images - eps), images + eps).clamp(0, 1)
    acc = (logits.argmax(1) == labels).float().mean()
    print(f"step {step} loss {loss.item():.6f} acc {acc.item():.6f}")
print(f"max perturbation {(x_adv - images).abs().max().item():.6f}")
