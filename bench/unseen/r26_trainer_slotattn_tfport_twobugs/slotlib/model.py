"""Slot Attention (Locatello et al., 2020), ported from the reference TF/Keras code."""
import torch
from torch import nn
from torch.nn import functional as F


def build_grid(resolution):
    ranges = [torch.linspace(0.0, 1.0, steps=r) for r in resolution]
    grid = torch.stack(torch.meshgrid(*ranges, indexing="ij"), dim=-1)
    grid = grid.reshape(resolution[0], resolution[1], -1).unsqueeze(0)
    return torch.cat([grid, 1.0 - grid], dim=-1)


class SoftPositionEmbed(nn.Module):
    def __init__(self, hidden_size, resolution):
        super().__init__()
        self.dense = nn.Linear(4, hidden_size)
        self.register_buffer("grid", build_grid(resolution))

    def forward(self, inputs):
        return inputs + self.dense(self.grid)


class SlotAttention(nn.Module):
    def __init__(self, num_slots, dim, iters=3, epsilon=1e-8, mlp_hidden=32):
        super().__init__()
        self.num_slots, self.iters, self.epsilon, self.dim = num_slots, iters, epsilon, dim
        self.norm_inputs = nn.LayerNorm(dim)
        self.norm_slots = nn.LayerNorm(dim)
        self.norm_mlp = nn.LayerNorm(dim)
        self.slots_mu = nn.Parameter(torch.randn(1, 1, dim) * dim ** -0.5)
        self.slots_log_sigma = nn.Parameter(torch.zeros(1, 1, dim))
        self.project_q = nn.Linear(dim, dim, bias=False)
        self.project_k = nn.Linear(dim, dim, bias=False)
        self.project_v = nn.Linear(dim, dim, bias=False)
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_hidden), nn.ReLU(), nn.Linear(mlp_hidden, dim))

    def forward(self, inputs):
        b, n, d = inputs.shape
        inputs = self.norm_inputs(inputs)
        k = self.project_k(inputs)  # [b, n, d]
        v = self.project_v(inputs)
        slots = self.slots_mu + self.slots_log_sigma.exp() * torch.randn(b, self.num_slots, d)

        for _ in range(self.iters):
            slots_prev = slots
            slots = self.norm_slots(slots)

            # Attention.
            q = self.project_q(slots)  # [b, num_slots, d]
            q *= self.dim ** -0.5  # Normalization.
            attn_logits = torch.einsum("bnd,bkd->bnk", k, q)
            attn = attn_logits.softmax(dim=-1)
            # `attn` has shape [b, num_inputs, num_slots]: slots compete for inputs.

            # Weighted mean.
            attn += self.epsilon
            attn /= attn.sum(dim=-2, keepdim=True)
            updates = torch.einsum("bnk,bnd->bkd", attn, v)

            # Slot update.
            slots = self.gru(updates.reshape(-1, d), slots_prev.reshape(-1, d)).reshape(b, -1, d)
            slots += self.mlp(self.norm_mlp(slots))

        return slots, attn


class SlotAttentionAutoEncoder(nn.Module):
    def __init__(self, resolution=(16, 16), num_slots=3, hid=16, iters=3):
        super().__init__()
        self.resolution, self.num_slots, self.hid = resolution, num_slots, hid
        self.encoder_cnn = nn.Sequential(
            nn.Conv2d(3, hid, 3, padding=1), nn.ReLU(),
            nn.Conv2d(hid, hid, 3, padding=1), nn.ReLU())
        self.encoder_pos = SoftPositionEmbed(hid, resolution)
        self.layer_norm = nn.LayerNorm(hid)
        self.mlp = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, hid))
        self.slot_attention = SlotAttention(num_slots, hid, iters)
        self.decoder_pos = SoftPositionEmbed(hid, resolution)
        self.decoder_cnn = nn.Sequential(
            nn.Conv2d(hid, hid, 3, padding=1), nn.ReLU(),
            nn.Conv2d(hid, 4, 3, padding=1))

    def forward(self, image):
        b = image.shape[0]
        x = self.encoder_cnn(image).permute(0, 2, 3, 1)  # [b, h, w, c]
        x = self.encoder_pos(x).flatten(1, 2)
        x = self.mlp(self.layer_norm(x))
        slots, attn = self.slot_attention(x)  # [b, k, d]
        # spatial broadcast decoder
        z = slots.reshape(-1, 1, 1, self.hid).expand(-1, *self.resolution, -1)
        z = self.decoder_pos(z).permute(0, 3, 1, 2)
        out = self.decoder_cnn(z).reshape(b, self.num_slots, 4, *self.resolution)
        recons, masks = out[:, :, :3], out[:, :, 3:]
        masks = masks.softmax(dim=1)
        recon = (recons * masks).sum(dim=1)
        return recon, recons, masks, slots
