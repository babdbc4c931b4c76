import json
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

from .losses import bce_loss, corrupt_tails, rank_metrics
from .model import CompGCNDistMult


def load_config():
    with open(os.path.join(os.path.dirname(__file__), "config.json")) as f:
        return json.load(f)


def synthetic_triples(cfg, gen):
    n, k = cfg["num_entities"], cfg["num_clusters"]
    heads = torch.randint(0, n, (cfg["num_triples"],), generator=gen)
    rels = torch.randint(0, cfg["num_relations"], (cfg["num_triples"],), generator=gen)
    tails = ((heads % k) + 2 * rels + 1) % k + k * torch.randint(0, n // k, (cfg["num_triples"],), generator=gen)
    return torch.stack([heads, rels, tails], dim=1)


@torch.no_grad()
def evaluate(model, triples):
    model.eval()
    scores = model.score_t(triples[:, :2])
    return rank_metrics(scores, triples[:, 2])


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"] + 1)
    triples = synthetic_triples(cfg, gen)
    model = CompGCNDistMult(cfg["num_entities"], cfg["num_relations"], cfg["embedding_dim"],
                            cfg["num_layers"], cfg["dropout"], triples)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loader = DataLoader(TensorDataset(triples), batch_size=cfg["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(cfg["seed"] + 2))
    history = []
    step = 0
    for epoch in range(cfg["epochs"]):
        model.train()
        for (pos,) in loader:
            neg = corrupt_tails(pos, cfg["num_entities"], cfg["num_negatives"], gen)
            loss = bce_loss(model.score_hrt(pos), model.score_hrt(neg))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            print(f"epoch {epoch} step {step:3d} loss {loss.item():.6f}")
            step += 1
        metrics = evaluate(model, triples[: cfg["eval_triples"]])
        history.append({"epoch": epoch, **metrics})
        print(f"epoch {epoch} eval mrr {metrics['mrr']:.4f} hits@3 {metrics['hits@3']:.4f}")

    os.makedirs(cfg["out_dir"], exist_ok=True)
    torch.save({"model": model.state_dict(), "history": history}, os.path.join(cfg["out_dir"], "compgcn.pt"))
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
