import torch

from .losses import masked_prediction_loss
from .model import HubertMini
from .utils import compute_mask_indices, load_config, make_corpus


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    wav, units = make_corpus(seed=cfg["seed"], **cfg["data"])
    model = HubertMini(cfg["data"]["num_units"], **cfg["model"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["optim"]["lr"])
    g = torch.Generator().manual_seed(1)
    bs, T = cfg["optim"]["batch_size"], cfg["data"]["frames"]
    for epoch in range(cfg["optim"]["epochs"]):
        perm = torch.randperm(wav.shape[0], generator=g)
        losses = []
        for i in range(0, wav.shape[0], bs):
            idx = perm[i:i + bs]
            mask = compute_mask_indices(len(idx), T, cfg["mask"]["prob"], cfg["mask"]["length"], g)
            logits = model(wav[idx], mask)
            loss = masked_prediction_loss(logits, units[idx], mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        print(f"epoch {epoch} masked-prediction loss {sum(losses) / len(losses):.6f}")
    with torch.no_grad():
        acc = (model(wav).argmax(-1) == units).float().mean().item()
    print(f"unmasked frame accuracy: {acc:.6f}")
    print(f"mask_emb checksum: {model.mask_emb.detach().double().pow(2).sum().item():.6f}")
    print(f"param checksum: {sum(p.detach().double().pow(2).sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
