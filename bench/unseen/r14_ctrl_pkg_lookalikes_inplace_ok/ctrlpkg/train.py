import copy
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from .graph import sbm
from .model import NodeClassifier

HERE = os.path.dirname(os.path.abspath(__file__))


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        g = cfg["graph"]
        gen = torch.Generator().manual_seed(cfg["seed"])
        self.x, self.y, self.edge_index, self.train_mask = sbm(
            g["num_nodes"], g["num_classes"], g["feat_dim"], g["p_in"], g["p_out"], g["train_frac"], gen)
        self.gen = gen
        self.rng = np.random.RandomState(cfg["seed"])
        torch.manual_seed(cfg["seed"])
        self.model = NodeClassifier(g["feat_dim"], cfg["model"]["hidden"], g["num_classes"], cfg["model"]["grad_scale"])
        self.ema = copy.deepcopy(self.model)
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg["train"]["lr"])
        counts = torch.bincount(self.y[self.train_mask], minlength=g["num_classes"]).float()
        self.class_weight = counts.sum() / (counts * g["num_classes"])

    def soft_targets(self, y):
        t = F.one_hot(y, self.cfg["graph"]["num_classes"]).float()
        eps = self.cfg["train"]["label_smoothing"]
        t.mul_(1 - eps).add_(eps / t.size(1))
        return t

    def train_step(self):
        t = self.cfg["train"]
        x = self.x.clone()
        x.add_(0.05 * torch.randn(x.shape, generator=self.gen))
        n = x.size(0)
        lam = float(self.rng.beta(t["mixup_alpha"], t["mixup_alpha"]))
        index = torch.from_numpy(self.rng.permutation(n))
        logits, feats = self.model(x, self.edge_index, mix=(lam, index))
        targets = self.soft_targets(self.y)
        targets = lam * targets + (1 - lam) * targets[index]
        mask = self.train_mask & self.train_mask[index]
        logp = F.log_softmax(logits[mask], dim=-1)
        w = self.class_weight[self.y[mask]]
        ce = -(targets[mask] * logp).sum(-1)
        loss = (w * ce).sum() / w.sum()
        loss = loss + t["feat_penalty"] * sum(f.pow(2).mean() for f in feats.values())
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.opt.step()
        with torch.no_grad():
            for pe, p in zip(self.ema.parameters(), self.model.parameters()):
                pe.mul_(t["ema_decay"]).add_(p, alpha=1 - t["ema_decay"])
        return loss.item()

    @torch.no_grad()
    def evaluate(self, model):
        model.eval()
        logits, _ = model(self.x, self.edge_index)
        model.train()
        test = ~self.train_mask
        return (logits.argmax(-1)[test] == self.y[test]).float().mean().item()

    def fit(self):
        t = self.cfg["train"]
        for epoch in range(1, t["epochs"] + 1):
            loss = self.train_step()
            if epoch % t["log_every"] == 0:
                print(f"epoch {epoch} loss {loss:.4f} test_acc {self.evaluate(self.model):.4f} "
                      f"ema_test_acc {self.evaluate(self.ema):.4f}")
        print(f"checksum {sum(p.abs().sum().item() for p in self.model.parameters()):.4f}")


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        cfg = json.load(f)
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
