"""python -m declite.train : pretrain the autoencoder, k-means init, then IDEC fine-tuning."""
import torch
import torch.nn.functional as F

from .config import load_config
from .data import make_blobs
from .dec import IDEC, target_distribution
from .kmeans import kmeans
from .metrics import cluster_acc


def pretrain(model, x, cfg, gen):
    opt = torch.optim.Adam(model.ae.parameters(), lr=cfg.pretrain_lr)
    for epoch in range(cfg.pretrain_epochs):
        perm = torch.randperm(x.size(0), generator=gen)
        total = 0.0
        for i in range(0, x.size(0), cfg.batch_size):
            xb = x[perm[i:i + cfg.batch_size]]
            x_bar, _ = model.ae(xb)
            loss = F.mse_loss(x_bar, xb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * xb.size(0)
        print(f"pretrain epoch {epoch} recon {total / x.size(0):.6f}")


def main():
    cfg = load_config()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    x, y = make_blobs(cfg, gen)

    model = IDEC(cfg)
    pretrain(model, x, cfg, gen)

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    # cluster parameter initiate
    with torch.no_grad():
        _, z = model.ae(x)
    centers, y_pred = kmeans(z, cfg.n_clusters, cfg.kmeans_iters, gen)
    with torch.no_grad():
        model.cluster_layer.copy_(centers)
    print(f"kmeans acc {cluster_acc(y, y_pred, cfg.n_clusters):.6f}")

    step = 0
    for epoch in range(cfg.epochs):
        perm = torch.randperm(x.size(0), generator=gen)
        kl_tot = rec_tot = 0.0
        for i in range(0, x.size(0), cfg.batch_size):
            if step % cfg.update_interval == 0:
                # update_interval: target distribution from the whole dataset
                with torch.no_grad():
                    _, tmp_q, _ = model(x)
                p = target_distribution(tmp_q)
            idx = perm[i:i + cfg.batch_size]
            x_bar, q, _ = model(x[idx])
            kl_loss = F.kl_div(q.log(), p[idx], reduction="batchmean")
            reconstr_loss = F.mse_loss(x_bar, x[idx])
            loss = kl_loss + cfg.gamma * reconstr_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            kl_tot += kl_loss.item() * idx.numel()
            rec_tot += reconstr_loss.item() * idx.numel()
            step += 1
        with torch.no_grad():
            _, q_all, _ = model(x)
        acc = cluster_acc(y, q_all.argmax(1), cfg.n_clusters)
        print(f"epoch {epoch} kl {kl_tot / x.size(0):.6f} recon {rec_tot / x.size(0):.6f} acc {acc:.6f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
