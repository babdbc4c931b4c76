import torch

from .losses import classification_loss
from .model import S4Classifier
from .utils import load_config, make_dataset, param_groups


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        acc = (logits.argmax(-1) == y).float().mean().item()
        loss = classification_loss(logits, y).item()
    model.train()
    return loss, acc


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    (xtr, ytr), (xte, yte) = make_dataset(seed=cfg["seed"], **cfg["data"])
    model = S4Classifier(1, cfg["data"]["num_classes"], **cfg["model"])
    opt = torch.optim.AdamW(param_groups(model, cfg["optim"]["lr"], cfg["optim"]["ssm_lr"]),
                            weight_decay=0.01)
    g = torch.Generator().manual_seed(1)
    bs = cfg["optim"]["batch_size"]
    for epoch in range(cfg["optim"]["epochs"]):
        perm = torch.randperm(xtr.shape[0], generator=g)
        running = []
        for i in range(0, xtr.shape[0], bs):
            idx = perm[i:i + bs]
            loss = classification_loss(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            running.append(loss.item())
        te_loss, te_acc = evaluate(model, xte, yte)
        print(f"epoch {epoch} train {sum(running) / len(running):.6f} test {te_loss:.6f} acc {te_acc:.6f}")
    k = model.layers[0].kernel
    print(f"ssm checksum: log_dt {k.log_dt.detach().double().sum().item():.6f} "
          f"C {k.C.detach().double().pow(2).sum().item():.6f} "
          f"log_A_real {k.log_A_real.detach().double().sum().item():.6f}")


if __name__ == "__main__":
    main()
