import os

import torch
import torch.nn.functional as F
import yaml

from .data import make_sbm_graph
from .model import GatedGCN

CONFIG = os.path.join(os.path.dirname(__file__), "config.yaml")


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        g = torch.Generator().manual_seed(cfg["seed"])
        d = cfg["data"]
        self.x, self.y, self.edge_index, self.train_mask, self.val_mask = make_sbm_graph(
            d["num_nodes"], d["num_classes"], d["feat_dim"], d["p_in"], d["p_out"],
            d["feat_noise"], d["train_frac"], g)
        torch.manual_seed(cfg["seed"])
        m = cfg["model"]
        self.model = GatedGCN(d["feat_dim"], m["hidden"], d["num_classes"],
                              self.edge_index.size(1), m["dropout"])
        t = cfg["train"]
        gate_params = list(self.model.gate.parameters())
        other = [p for n, p in self.model.named_parameters() if not n.startswith("gate.")]
        self.opt = torch.optim.Adam([
            {"params": other, "lr": t["lr"], "weight_decay": t["weight_decay"]},
            {"params": gate_params, "lr": t["gate_lr"]},
        ])

    def train_step(self):
        self.model.train()
        self.opt.zero_grad()
        logits, w = self.model(self.x, self.edge_index)
        ce = F.cross_entropy(logits[self.train_mask], self.y[self.train_mask])
        loss = ce + self.cfg["train"]["gate_l1"] * w.mean()
        loss.backward()
        self.opt.step()
        return ce.item()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        logits, w = self.model(self.x, self.edge_index)
        pred = logits.argmax(-1)
        tr = (pred[self.train_mask] == self.y[self.train_mask]).float().mean().item()
        va = (pred[self.val_mask] == self.y[self.val_mask]).float().mean().item()
        src, dst = self.edge_index
        intra = self.y[src] == self.y[dst]
        return tr, va, w[intra].mean().item(), w[~intra].mean().item()

    def fit(self):
        t = self.cfg["train"]
        for epoch in range(1, t["epochs"] + 1):
            ce = self.train_step()
            if epoch % t["log_every"] == 0:
                tr, va, wi, wo = self.evaluate()
                print(f"epoch {epoch:3d} ce {ce:.4f} train_acc {tr:.3f} val_acc {va:.3f} "
                      f"gate_intra {wi:.4f} gate_inter {wo:.4f}")
        checksum = sum(p.double().abs().sum().item() for p in self.model.parameters())
        print(f"param checksum {checksum:.4f}")


def main():
    with open(CONFIG) as f:
        cfg = yaml.safe_load(f)
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
