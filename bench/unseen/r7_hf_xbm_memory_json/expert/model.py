import torch
import torch.nn as nn
import torch.nn.functional as F


class XBMClassifier(nn.Module):
    """Bag-of-embeddings encoder trained with cross-entropy plus a supervised contrastive
    term against a cross-batch memory (XBM) of recent embeddings."""

    def __init__(self, vocab, n_classes, dim, proj_dim, memory_size, temperature, lambda_con):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.proj = nn.Linear(dim, proj_dim)
        self.classifier = nn.Linear(dim, n_classes)
        self.memory_size, self.temperature, self.lambda_con = memory_size, temperature, lambda_con
        self.memory_feats = None
        self.memory_labels = None

    def contrastive(self, feats, labels):
        sim = feats @ self.memory_feats.t() / self.temperature
        pos = (labels[:, None] == self.memory_labels[None, :]).float()
        log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
        has_pos = pos.sum(1) > 0
        per_anchor = -(pos * log_prob).sum(1) / pos.sum(1).clamp(min=1)
        return per_anchor[has_pos].mean()

    def enqueue(self, feats, labels):
        if self.memory_feats is None:
            new_f, new_l = feats, labels
        else:
            new_f = torch.cat([feats, self.memory_feats])
            new_l = torch.cat([labels, self.memory_labels])
        self.memory_feats = new_f[: self.memory_size].detach()
        self.memory_labels = new_l[: self.memory_size]

    def forward(self, input_ids, labels=None):
        h = self.encoder(self.embed(input_ids).mean(1))
        logits = self.classifier(h)
        out = {"logits": logits}
        if labels is not None:
            loss = F.cross_entropy(logits, labels)
            if self.training:
                feats = F.normalize(self.proj(h), dim=-1)
                if self.memory_feats is not None:
                    loss = loss + self.lambda_con * self.contrastive(feats, labels)
                self.enqueue(feats, labels)
            out["loss"] = loss
        return out
