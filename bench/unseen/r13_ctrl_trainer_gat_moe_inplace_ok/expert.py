"""Node classification on a stochastic block model: GAT layer + top-2 mixture-of-experts FFN.

Run from this folder (reads ./config.json).
"""
import copy
import json

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_sbm(cfg, gen):
    n, c = cfg["n_nodes"], cfg["n_communities"]
    y = torch.arange(n) % c
    same = y[:, None] == y[None, :]
    p = torch.where(same, torch.tensor(cfg["p_in"]), torch.tensor(cfg["p_out"]))
    upper = torch.triu(torch.rand(n, n, generator=gen) < p, diagonal=1)
    adj = upper | upper.t() | torch.eye(n, dtype=torch.bool)
    centers = torch.randn(c, cfg["feat_dim"], generator=gen)
    x = 0.6 * centers[y] + torch.randn(n, cfg["feat_dim"], generator=gen)
    node_type = torch.randint(0, 3, (n,), generator=gen)
    train_mask = torch.rand(n, generator=gen) < 0.5
    return x, adj, y, node_type, train_mask


class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, heads, dropout):
        super().__init__()
        self.heads, self.d = heads, out_dim // heads
        self.W = nn.Linear(in_dim, out_dim, bias=False)
        self.att_src = nn.Parameter(torch.randn(heads, self.d) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(heads, self.d) * 0.1)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.dropout = dropout

    def forward(self, x, adj):
        n = x.shape[0]
        h = self.W(x).view(n, self.heads, self.d)
        a_src = (h * self.att_src).sum(-1)
        a_dst = (h * self.att_dst).sum(-1)
        e = F.leaky_relu(a_src[:, None, :] + a_dst[None, :, :], 0.2)
        e.masked_fill_(~adj[..., None], float("-inf"))
        alpha = torch.softmax(e, dim=1)
        alpha = F.dropout(alpha, self.dropout, self.training)
        out = torch.einsum("ijh,jhd->ihd", alpha, h).reshape(n, -1)
        out += self.bias
        return out


class MoEFFN(nn.Module):
    """Top-k routed experts, Mixtral-style renormalised routing weights."""

    def __init__(self, dim, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)) for _ in range(n_experts)])

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        weights, idx = torch.topk(probs, self.top_k, dim=-1)
        weights /= weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e in range(self.n_experts):
            tok, slot = (idx == e).nonzero(as_tuple=True)
            if tok.numel() == 0:
                continue
            out.index_add_(0, tok, self.experts[e](x[tok]) * weights[tok, slot, None])
        load = F.one_hot(idx[:, 0], self.n_experts).float().mean(0)
        aux = self.n_experts * (probs.mean(0) * load).sum()
        return out, aux


class GraphMoENet(nn.Module):
    def __init__(self, cfg, n_classes):
        super().__init__()
        hid = cfg["hidden"]
        self.dropout = cfg["dropout"]
        self.inp = nn.Linear(cfg["feat_dim"], hid)
        self.type_emb = nn.Embedding(3, hid, max_norm=1.0)
        self.gat = GATLayer(hid, hid, cfg["heads"], cfg["dropout"])
        self.norm = nn.LayerNorm(hid)
        self.moe = MoEFFN(hid, cfg["n_experts"], cfg["top_k"])
        self.head = nn.Linear(hid, n_classes)
        self.register_buffer("class_prior", torch.zeros(n_classes))

    def forward(self, x, adj, node_type):
        h = self.inp(x)
        h += self.type_emb(node_type)
        h = F.dropout(h, self.dropout, self.training, inplace=True)
        h.relu_()
        g = self.gat(h, adj)
        g += h
        g = self.norm(g)
        m, aux = self.moe(g)
        m += g
        logits = self.head(m)
        logits += self.class_prior
        return logits, aux


class Trainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        self.ema = copy.deepcopy(model).eval()
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def smoothed_targets(self, y, n_classes):
        t = F.one_hot(y, n_classes).float()
        t.mul_(1 - self.cfg["label_smoothing"]).add_(self.cfg["label_smoothing"] / n_classes)
        return t

    def train_step(self, x, adj, node_type, y, mask):
        self.model.train()
        logits, aux = self.model(x, adj, node_type)
        target = self.smoothed_targets(y[mask], logits.shape[1])
        logp = F.log_softmax(logits[mask], dim=-1)
        loss = -(target * logp).sum(-1).mean() + self.cfg["aux_weight"] * aux
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        with torch.no_grad():
            for pe, p in zip(self.ema.parameters(), self.model.parameters()):
                pe.mul_(self.cfg["ema_decay"]).add_(p, alpha=1 - self.cfg["ema_decay"])
        return loss.item(), aux.item()

    @torch.no_grad()
    def accuracy(self, model, x, adj, node_type, y, mask):
        model.eval()
        logits, _ = model(x, adj, node_type)
        return (logits.argmax(1)[mask] == y[mask]).float().mean().item()

    def fit(self, x, adj, node_type, y, train_mask):
        for epoch in range(1, self.cfg["epochs"] + 1):
            loss, aux = self.train_step(x, adj, node_type, y, train_mask)
            if epoch % 20 == 0:
                acc = self.accuracy(self.model, x, adj, node_type, y, ~train_mask)
                ema_acc = self.accuracy(self.ema, x, adj, node_type, y, ~train_mask)
                print(f"epoch {epoch:3d}  loss {loss:.4f}  aux {aux:.4f}  "
                      f"test acc {acc:.4f}  ema test acc {ema_acc:.4f}")


def main():
    with open("config.json") as f:
        cfg = json.load(f)
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    x, adj, y, node_type, train_mask = make_sbm(cfg, gen)
    x.sub_(x.mean(0)).div_(x.std(0))

    model = GraphMoENet(cfg, cfg["n_communities"])
    trainer = Trainer(model, cfg)
    trainer.fit(x, adj, node_type, y, train_mask)
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
