"""Embedding + link prediction heads."""
import torch
import torch.nn as nn


class MemoryEmbedding(nn.Module):
    def __init__(self, num_nodes, memory_dim, embed_dim):
        super().__init__()
        self.node_emb = nn.Embedding(num_nodes, embed_dim)
        self.proj = nn.Linear(memory_dim, embed_dim)

    def forward(self, n_id, mem):
        return torch.tanh(self.proj(mem) + self.node_emb(n_id))


class LinkPredictor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.src = nn.Linear(dim, dim)
        self.dst = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, z_src, z_dst):
        return self.out(torch.relu(self.src(z_src) + self.dst(z_dst))).squeeze(-1)
