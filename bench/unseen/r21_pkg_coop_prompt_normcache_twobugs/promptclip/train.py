import torch

from .losses import clip_logits, coop_loss
from .model import CoOp
from .utils import load_config, make_dataset


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        img, txt = model(x)
        acc = (clip_logits(img, txt, model.logit_scale).argmax(-1) == y).float().mean().item()
    model.train()
    return acc


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    (xtr, ytr), (xte, yte) = make_dataset(seed=cfg["seed"], **cfg["data"])
    model = CoOp(num_classes=cfg["data"]["num_classes"], img_dim=cfg["data"]["img_dim"], **cfg["model"])
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=cfg["optim"]["lr"], momentum=0.9)
    g = torch.Generator().manual_seed(1)
    bs = cfg["optim"]["batch_size"]
    for epoch in range(cfg["optim"]["epochs"]):
        perm = torch.randperm(xtr.shape[0], generator=g)
        losses = []
        for i in range(0, xtr.shape[0], bs):
            idx = perm[i:i + bs]
            img, txt = model(xtr[idx])
            loss, _ = coop_loss(img, txt, ytr[idx], model.logit_scale)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        acc = evaluate(model, xte, yte)
        print(f"epoch {epoch} loss {sum(losses) / len(losses):.6f} test acc {acc:.6f}")
    ctx = model.prompt_learner.ctx.detach().double()
    print(f"ctx checksum: {ctx.pow(2).sum().item():.6f} {ctx.abs().sum().item():.6f}")


if __name__ == "__main__":
    main()
