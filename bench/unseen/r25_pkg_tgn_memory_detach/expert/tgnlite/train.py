"""Self-supervised temporal link prediction: ``python -m tgnlite.train``."""
import json
from importlib import resources

import torch
import torch.nn.functional as F

from .data import make_stream
from .memory import NodeMemory
from .model import LinkPredictor, MemoryEmbedding


def load_config():
    return json.loads(resources.files(__package__).joinpath("config.json").read_text())


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    d, m, tr = cfg["data"], cfg["model"], cfg["train"]
    src, dst, t, msg = make_stream(d["num_nodes"], d["num_events"], d["msg_dim"], d["communities"], cfg["seed"])

    memory = NodeMemory(d["num_nodes"], d["msg_dim"], m["memory_dim"], m["time_dim"])
    embed = MemoryEmbedding(d["num_nodes"], m["memory_dim"], m["embed_dim"])
    predictor = LinkPredictor(m["embed_dim"])
    params = list(memory.parameters()) + list(embed.parameters()) + list(predictor.parameters())
    opt = torch.optim.Adam(params, lr=tr["lr"])
    neg_gen = torch.Generator().manual_seed(cfg["seed"] + 1)

    for epoch in range(tr["epochs"]):
        memory.reset_state()
        total, hits, n = 0.0, 0, 0
        for i in range(0, len(src), tr["batch_size"]):
            s, p, ts, ms = (a[i:i + tr["batch_size"]] for a in (src, dst, t, msg))
            neg = torch.randint(0, d["num_nodes"], (len(s),), generator=neg_gen)
            n_id = torch.cat([s, p, neg]).unique()
            assoc = torch.full((d["num_nodes"],), -1, dtype=torch.long)
            assoc[n_id] = torch.arange(len(n_id))

            z = embed(n_id, memory(n_id))
            pos_out = predictor(z[assoc[s]], z[assoc[p]])
            neg_out = predictor(z[assoc[s]], z[assoc[neg]])
            loss = F.binary_cross_entropy_with_logits(pos_out, torch.ones_like(pos_out)) \
                + F.binary_cross_entropy_with_logits(neg_out, torch.zeros_like(neg_out))

            memory.update_state(s, p, ts, ms)
            opt.zero_grad()
            loss.backward()
            opt.step()
            memory.detach()

            total += loss.item() * len(s)
            hits += (pos_out > neg_out).sum().item()
            n += len(s)
        print(f"epoch {epoch} loss {total / n:.6f} rank_acc {hits / n:.4f} "
              f"mem_norm {memory.memory.norm().item():.6f}")
    checksum = sum(p.double().sum().item() for p in params)
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
