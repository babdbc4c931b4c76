"""Federated averaging (McMahan et al. 2017) simulated on one machine: each round every client
trains a copy of the global model on its own (non-IID) data, and the server averages the
clients' state_dicts weighted by their number of samples."""
import argparse
import copy
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_model(cfg):
    return nn.Sequential(nn.Linear(cfg["in_dim"], cfg["hidden"]), nn.BatchNorm1d(cfg["hidden"]), nn.ReLU(),
                         nn.Linear(cfg["hidden"], cfg["num_classes"]))


class FedAvgTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.g = torch.Generator().manual_seed(cfg["seed"])
        self.global_model = make_model(cfg)
        centers = 1.5 * torch.randn(cfg["num_classes"], cfg["in_dim"], generator=self.g)
        self.clients = []
        for c in range(cfg["num_clients"]):
            # non-IID: each client over-samples one class
            probs = torch.full((cfg["num_classes"],), 1.0)
            probs[c % cfg["num_classes"]] = 4.0
            n = cfg["samples_per_client"] + 64 * c
            y = torch.multinomial(probs, n, replacement=True, generator=self.g)
            x = centers[y] + torch.randn(n, cfg["in_dim"], generator=self.g)
            self.clients.append((x, y))
        yt = torch.randint(0, cfg["num_classes"], (600,), generator=self.g)
        self.test = (centers[yt] + torch.randn(600, cfg["in_dim"], generator=self.g), yt)

    def train_step(self, model, opt, x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    def local_update(self, x, y):
        model = copy.deepcopy(self.global_model)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=self.cfg["lr"], momentum=0.9)
        losses = []
        for _ in range(self.cfg["local_epochs"]):
            perm = torch.randperm(len(x), generator=self.g)
            for i in range(0, len(x), self.cfg["batch_size"]):
                idx = perm[i:i + self.cfg["batch_size"]]
                if len(idx) < 2:
                    continue
                losses.append(self.train_step(model, opt, x[idx], y[idx]))
        return model.state_dict(), sum(losses) / len(losses)

    def aggregate(self, states, sizes):
        total = float(sum(sizes))
        new_state = {k: torch.zeros_like(v) for k, v in self.global_model.state_dict().items()}
        for state, n in zip(states, sizes):
            w = n / total
            for k in new_state:
                new_state[k] += w * state[k]
        self.global_model.load_state_dict(new_state)

    @torch.no_grad()
    def evaluate(self):
        self.global_model.eval()
        x, y = self.test
        logits = self.global_model(x)
        return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()

    def fit(self):
        for r in range(1, self.cfg["rounds"] + 1):
            states, sizes, losses = [], [], []
            for x, y in self.clients:
                s, l = self.local_update(x, y)
                states.append(s)
                sizes.append(len(x))
                losses.append(l)
            print(f"round {r} client losses " + " ".join(f"{l:.4f}" for l in losses))
            self.aggregate(states, sizes)
            tl, ta = self.evaluate()
            print(f"round {r} global test loss {tl:.5f} acc {ta:.4f}")
        bn = self.global_model[1]
        print(f"bn batches tracked {int(bn.num_batches_tracked)} running_mean sum {bn.running_mean.sum().item():.5f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent / "fedavg.json"))
    cfg = json.load(open(parser.parse_args().config))
    FedAvgTrainer(cfg).fit()


if __name__ == "__main__":
    main()
