import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm


class Rotary(nn.Module):
    def __init__(self, head_dim, max_len):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(max_len).float(), inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        # tables built once at construction, as buffers: never inference tensors
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x, start):
        n = x.shape[-2]
        cos, sin = self.cos[start:start + n], self.sin[start:start + n]
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, dim, heads, max_len, max_batch):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.rotary = Rotary(dim // heads, max_len)
        self.register_buffer("cache_k", torch.zeros(max_batch, heads, max_len, dim // heads), persistent=False)
        self.register_buffer("cache_v", torch.zeros(max_batch, heads, max_len, dim // heads), persistent=False)

    def forward(self, x, start=0, use_cache=False):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k = self.rotary(q, start), self.rotary(k, start)
        if use_cache:
            # generation only (called under inference_mode): append to the cache in place
            self.cache_k[:b, :, start:start + n] = k
            self.cache_v[:b, :, start:start + n] = v
            k, v = self.cache_k[:b, :, :start + n], self.cache_v[:b, :, :start + n]
        att = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if n > 1:
            mask = torch.ones(n, start + n, dtype=torch.bool).tril(diagonal=start)
            att.masked_fill_(~mask, float("-inf"))          # in place on a matmul output: nothing saved it
        att = att.softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, n, d)
        return self.out(y)


class Block(nn.Module):
    def __init__(self, dim, heads, max_len, max_batch):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, max_len, max_batch)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = weight_norm(nn.Linear(dim, 2 * dim))
        self.act = nn.ReLU(inplace=True)                    # in place on a Linear output: legal
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x, start=0, use_cache=False):
        x = x + self.attn(self.ln1(x), start, use_cache)
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class PromptLM(nn.Module):
    def __init__(self, cfg, max_batch=64):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.prompt = nn.Parameter(0.02 * torch.randn(cfg.prompt_len, cfg.dim))
        self.blocks = nn.ModuleList([Block(cfg.dim, cfg.heads, cfg.max_len, max_batch) for _ in range(cfg.layers)])
        self.ln_f = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size)
        self.register_buffer("steps_seen", torch.zeros((), dtype=torch.long))

    def forward(self, ids, start=0, use_cache=False):
        x = self.embed(ids)
        if start == 0:
            # the first prompt_len positions hold placeholder ids: write the soft prompt over their
            # embeddings (in place on an Embedding output, whose backward does not need it)
            x[:, : self.cfg.prompt_len] = self.prompt
        for blk in self.blocks:
            x = blk(x, start, use_cache)
        return self.head(self.ln_f(x))

    @torch.inference_mode()
    def generate(self, ids, new_tokens):
        logits = self(ids, 0, use_cache=True)
        out = [ids]
        pos = ids.shape[1]
        for _ in range(new_tokens):
            nxt = logits[:, -1:].argmax(-1)
            out.append(nxt)
            logits = self(nxt, pos, use_cache=True)
            pos += 1
        return torch.cat(out, dim=1)
