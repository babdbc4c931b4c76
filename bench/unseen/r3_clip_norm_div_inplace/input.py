# CLIP-style contrastive training of an image tower and a text tower on paired synthetic
# features; embeddings are L2-normalised in place before the similarity. Based on
# https://github.com/huggingface/transformers/pull/24529 (OwlViT:
# `image_class_embeds /= torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6`
# broke the backward pass, issue #24525) and
# https://github.com/modelscope/modelscope/issues/481 (Chinese CLIP fine-tuning, fixed by
# replacing the '/=' lines with a normal division).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(29)

D_IMG, D_TXT, D = 20, 12, 16


class TinyCLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = nn.Sequential(nn.Linear(D_IMG, 32), nn.GELU(), nn.Linear(32, D))
        self.textual = nn.Sequential(nn.Linear(D_TXT, 32), nn.GELU(), nn.Linear(32, D))
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, img, txt):
        image_embeds = self.visual(img)
        text_embeds = self.textual(txt)
        image_embeds /= torch.linalg.norm(image_embeds, dim=-1, keepdim=True) + 1e-6
        text_embeds /= torch.linalg.norm(text_embeds, dim=-1, keepdim=True) + 1e-6
        return self.logit_scale.exp() * image_embeds @ text_embeds.t()


model = TinyCLIP()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
latent = torch.randn(256, 6)
imgs = latent @ torch.randn(6, D_IMG) + 0.1 * torch.randn(256, D_IMG)
txts = latent @ torch.randn(6, D_TXT) + 0.1 * torch.randn(256, D_TXT)

for step in range(20):
    idx = torch.randint(0, 256, (32,))
    logits = model(imgs[idx], txts[idx])
    labels = torch.arange(32)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"step {step} loss {loss.item():.6f} scale {model.logit_scale.exp().item():.6f}")
