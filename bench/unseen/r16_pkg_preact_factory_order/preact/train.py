import torch
import torch.nn.functional as F

from .config import load_config
from .model import PreActNet


def make_data(cfg):
    g = torch.Generator().manual_seed(123)
    n, d, k = cfg["n"], cfg["in_dim"], cfg["classes"]
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, k, generator=g)
    y = (torch.tanh(x @ w) + 0.3 * torch.randn(n, k, generator=g)).argmax(1)
    return x, y


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    x, y = make_data(cfg["data"])
    model = PreActNet(cfg["data"]["in_dim"], cfg["data"]["classes"], cfg["model"])
    tc = cfg["train"]
    opt = torch.optim.SGD(model.parameters(), lr=tc["lr"], momentum=tc["momentum"])
    step = 0
    for epoch in range(tc["epochs"]):
        perm = torch.randperm(x.shape[0])
        for i in range(0, x.shape[0], tc["batch"]):
            idx = perm[i:i + tc["batch"]]
            logits = model(x[idx])
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % tc["log_every"] == 0:
                print(f"step {step:3d} loss {loss.item():.5f}")
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
        for name, block in model.stages.items():
            print(f"{name} residual-norm {block.residual[1].weight.norm().item():.5f}")
        total = sum(p.double().abs().sum().item() for p in model.parameters())
    print(f"train acc {acc:.4f}  param-abs-sum {total:.5f}")


if __name__ == "__main__":
    main()
