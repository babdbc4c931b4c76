"""Train a small classifier, then calibrate its held-out logits with the local
`calib` package (vector scaling fitted by L-BFGS)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from calib import expected_calibration_error, fit_vector_scaling


def make_split(n, centers, gen):
    y = torch.randint(0, centers.shape[0], (n,), generator=gen)
    x = centers[y] + 1.6 * torch.randn(n, centers.shape[1], generator=gen)
    return x, y


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    centers = torch.randn(3, 10, generator=gen)
    x_tr, y_tr = make_split(150, centers, gen)
    x_val, y_val = make_split(300, centers, gen)

    net = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 3))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for step in range(200):  # deliberately over-trained -> over-confident
        loss = F.cross_entropy(net(x_tr), y_tr)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"train loss {loss.item():.5f}")

    with torch.no_grad():
        val_logits = net(x_val)
    print(f"before nll {F.cross_entropy(val_logits, y_val).item():.5f} "
          f"ece {expected_calibration_error(val_logits, y_val):.5f}")

    head = fit_vector_scaling(val_logits, y_val)
    with torch.no_grad():
        cal = head(val_logits)
    print(f"after  nll {F.cross_entropy(cal, y_val).item():.5f} "
          f"ece {expected_calibration_error(cal, y_val):.5f}")
    print("w", " ".join(f"{v:.5f}" for v in head.w.tolist()),
          "b", " ".join(f"{v:.5f}" for v in head.b.tolist()))


if __name__ == "__main__":
    main()
