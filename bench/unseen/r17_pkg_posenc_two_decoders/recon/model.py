import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenEncoder(nn.Module):
    def __init__(self, d_in, dim):
        super().__init__()
        self.fc1 = nn.Linear(d_in, 2 * dim)
        self.proj = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return self.proj(F.gelu(self.fc1(x)))


class TokenDecoder(nn.Module):
    """ViT-style decoder head: add a learned position table, then a small MLP."""

    def __init__(self, n_tokens, dim, out_dim):
        super().__init__()
        self.de_pos_embedding = nn.Parameter(0.02 * torch.randn(1, n_tokens, dim))
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, out_dim)

    def forward(self, token):
        token += self.de_pos_embedding
        return self.fc2(F.gelu(self.fc1(self.norm(token))))


class TwoHeadAutoencoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = TokenEncoder(cfg.d_in, cfg.dim)
        self.decoder_rec = TokenDecoder(cfg.n_tokens, cfg.dim, cfg.d_in)
        self.decoder_aux = TokenDecoder(cfg.n_tokens, cfg.dim, 1)

    def forward(self, x):
        quant = self.encoder(x)
        rec = self.decoder_rec(quant)
        aux = self.decoder_aux(quant)
        return rec, aux.squeeze(-1)
