import torch

from .losses import node_classification_loss
from .model import GAT
from .utils import load_config, make_sbm_graph


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    x, edge_index, y, train_mask = make_sbm_graph(seed=cfg["seed"], **cfg["graph"])
    N = x.shape[0]
    m = cfg["model"]
    model = GAT(x.shape[1], cfg["graph"]["num_classes"], m["hidden"], m["heads"], m["layers"],
                attn_dropout=m["attn_dropout"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["optim"]["lr"],
                           weight_decay=cfg["optim"]["weight_decay"])
    history = []
    for epoch in range(cfg["optim"]["epochs"]):
        model.train()
        opt.zero_grad()
        logits = model(x, edge_index)
        loss, ce = node_classification_loss(logits, y, train_mask, model.attention_maps(),
                                            edge_index[1], N, cfg["loss"]["attn_entropy_weight"])
        loss.backward()
        opt.step()
        history.append((loss.item(), ce.item()))
    model.eval()
    with torch.no_grad():
        pred = model(x, edge_index).argmax(-1)
        test_acc = (pred[~train_mask] == y[~train_mask]).float().mean().item()
    for ep in (0, len(history) // 2, len(history) - 1):
        print(f"epoch {ep:3d} loss {history[ep][0]:.6f} ce {history[ep][1]:.6f}")
    print(f"test acc: {test_acc:.6f}")
    print(f"param checksum: {sum(p.detach().double().sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
