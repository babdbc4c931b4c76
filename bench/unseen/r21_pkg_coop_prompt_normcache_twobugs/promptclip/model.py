import math

import torch
import torch.nn as nn

from .utils import class_name_tokens


class ImageEncoder(nn.Module):
    def __init__(self, img_dim, embed_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(img_dim, 32), nn.GELU(), nn.Linear(32, embed_dim))

    def forward(self, x):
        return self.net(x)


class TextEncoder(nn.Module):
    """One pre-LN self-attention block, reads the feature at the EOS position."""

    def __init__(self, d, max_len=16):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(max_len, d) * 0.1)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln_final = nn.LayerNorm(d)
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, prompts):                  # [K, L, d]
        L, d = prompts.shape[1], prompts.shape[2]
        x = prompts + self.pos[:L]
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), dim=-1)
        x = x + self.out(att @ v)
        return self.proj(self.ln_final(x[:, -1]))   # EOS is the last token


class PromptLearner(nn.Module):
    def __init__(self, num_classes, n_ctx, d, token_embedding, class_specific):
        super().__init__()
        shape = (num_classes, n_ctx, d) if class_specific else (n_ctx, d)
        self.ctx = nn.Parameter(torch.randn(shape) * 0.02)
        with torch.no_grad():
            names = token_embedding(class_name_tokens(num_classes))          # [K, 2, d]
            eos = token_embedding(torch.zeros(num_classes, 1, dtype=torch.long))
        self.register_buffer("suffix", torch.cat([names, eos], dim=1))
        self.num_classes = num_classes

    def forward(self):
        ctx = self.ctx
        if ctx.dim() == 2:
            ctx = ctx.unsqueeze(0).expand(self.num_classes, -1, -1)
        return torch.cat([ctx, self.suffix], dim=1)                         # [K, n_ctx + 3, d]


class CoOp(nn.Module):
    def __init__(self, num_classes, img_dim, embed_dim, n_ctx, class_specific_ctx,
                 logit_scale, cache_text_features):
        super().__init__()
        self.image_encoder = ImageEncoder(img_dim, embed_dim)
        self.token_embedding = nn.Embedding(2 * num_classes + 1, embed_dim)
        self.text_encoder = TextEncoder(embed_dim)
        for p in self.parameters():                     # the "pre-trained" CLIP stays frozen
            p.requires_grad_(False)
        self.prompt_learner = PromptLearner(num_classes, n_ctx, embed_dim, self.token_embedding,
                                            class_specific_ctx)
        self.logit_scale = logit_scale
        self.cache_text_features = cache_text_features
        self._text_cache = None

    def encode_text(self):
        if self.cache_text_features and self._text_cache is not None:
            return self._text_cache
        feats = self.text_encoder(self.prompt_learner())
        if self.cache_text_features:
            self._text_cache = feats
        return feats

    def forward(self, images):
        return self.image_encoder(images), self.encode_text()
