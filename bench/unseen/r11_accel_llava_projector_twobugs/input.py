"""Stage-1 feature alignment of a tiny LLaVA-style model with accelerate.

A frozen conv "vision tower" encodes 8x8 images into 4 patch features, a trainable
projector maps them into the frozen language model's embedding space, and the projected
features replace the <image> placeholder tokens of the prompt.
"""
import argparse
from pathlib import Path

import yaml
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset
from transformers import LlamaConfig, LlamaForCausalLM

IMAGE_TOKEN, BOS, EOS = 1, 2, 3
CLASS_WORDS = [(10, 11), (12, 13), (14, 15), (16, 17)]   # two caption tokens per class


class VisionTower(nn.Module):
    """Stand-in for a frozen CLIP encoder: 8x8 image -> 2x2 grid of patch features."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, stride=2, padding=1)
        self.post_layernorm = nn.LayerNorm(channels)

    @torch.inference_mode()
    def encode(self, pixel_values):
        h = F.gelu(self.conv1(pixel_values))
        h = F.gelu(self.conv2(h))                      # (B, C, 4, 4)
        h = F.avg_pool2d(h, 2)                         # (B, C, 2, 2)
        return self.post_layernorm(h.flatten(2).transpose(1, 2))   # (B, 4, C)


class TinyLlava(nn.Module):
    def __init__(self, lm, vision, vision_dim):
        super().__init__()
        self.lm = lm
        self.vision = vision
        hidden = lm.config.hidden_size
        self.projector = nn.Sequential(nn.Linear(vision_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    def forward(self, input_ids, pixel_values, labels):
        image_features = self.vision.encode(pixel_values)
        image_embeds = self.projector(image_features)
        inputs_embeds = self.lm.get_input_embeddings()(input_ids)
        image_mask = input_ids == IMAGE_TOKEN
        inputs_embeds[image_mask] = image_embeds.reshape(-1, image_embeds.shape[-1])
        return self.lm(inputs_embeds=inputs_embeds, labels=labels)


def make_dataset(n, num_patches, generator):
    """Images with one of four stripe patterns; caption = BOS <image>*P w1 w2 EOS."""
    cls = torch.randint(0, 4, (n,), generator=generator)
    imgs = 0.3 * torch.randn(n, 1, 8, 8, generator=generator)
    for i, c in enumerate(cls.tolist()):
        if c == 0:
            imgs[i, 0, :, 1::4] += 1.0
        elif c == 1:
            imgs[i, 0, 1::4, :] += 1.0
        elif c == 2:
            imgs[i, 0, :4, :4] += 1.0
        else:
            imgs[i, 0, 4:, 4:] += 1.0
    ids = torch.full((n, 1 + num_patches + 3), IMAGE_TOKEN, dtype=torch.long)
    ids[:, 0] = BOS
    words = torch.tensor([CLASS_WORDS[c] for c in cls.tolist()])
    ids[:, 1 + num_patches:1 + num_patches + 2] = words
    ids[:, -1] = EOS
    labels = ids.clone()
    labels[:, :1 + num_patches] = -100
    return TensorDataset(ids, imgs, labels), cls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent / "config.yaml"))
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    set_seed(cfg["seed"])
    tcfg = cfg["train"]
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=tcfg["gradient_accumulation_steps"])

    lm = LlamaForCausalLM(LlamaConfig(**cfg["lm"], bos_token_id=BOS, eos_token_id=EOS, pad_token_id=0))
    vision = VisionTower(cfg["vision"]["channels"])
    model = TinyLlava(lm, vision, cfg["vision"]["channels"])
    model.lm.requires_grad_(False)
    model.lm.lm_head.requires_grad_(True)        # the caption words are new tokens
    model.vision.requires_grad_(False)
    if tcfg["gradient_checkpointing"]:
        model.lm.gradient_checkpointing_enable()
    model.lm.config.use_cache = False

    g = torch.Generator().manual_seed(cfg["seed"])
    train_ds, _ = make_dataset(tcfg["batch_size"] * 8, cfg["vision"]["num_patches"], g)
    val_ds, _ = make_dataset(64, cfg["vision"]["num_patches"], g)
    loader = DataLoader(train_ds, batch_size=tcfg["batch_size"], shuffle=True, generator=torch.Generator().manual_seed(1))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=tcfg["lr"])
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"trainable params {trainable} (projector + lm_head)")
    model, opt, loader = accelerator.prepare(model, opt, loader)

    model.train()
    step, it = 0, iter(loader)
    while step < tcfg["steps"]:
        try:
            ids, imgs, labels = next(it)
        except StopIteration:
            it = iter(loader)
            continue
        with accelerator.accumulate(model):
            out = model(ids, imgs, labels)
            accelerator.backward(out.loss)
            opt.step()
            opt.zero_grad()
        if accelerator.sync_gradients:
            step += 1
            if step % tcfg["log_every"] == 0:
                print(f"step {step:3d} loss {out.loss.item():.5f}")

    model.eval()
    ids, imgs, labels = val_ds.tensors
    with torch.no_grad():
        out = model(ids, imgs, labels)
        pred = out.logits[:, -4:-2].argmax(-1)          # predictions of the two caption words
        acc = (pred == ids[:, -3:-1]).all(-1).float().mean().item()
    print(f"val loss {out.loss.item():.5f} caption acc {acc:.4f}")
    unwrapped = accelerator.unwrap_model(model)
    proj_norm = sum(p.detach().double().norm().item() for p in unwrapped.projector.parameters())
    head_norm = unwrapped.lm.lm_head.weight.detach().double().norm().item()
    print(f"projector norm {proj_norm:.5f} lm_head norm {head_norm:.5f}")


if __name__ == "__main__":
    main()
