import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loaders(cfg, seed):
    d = cfg["data"]
    g = torch.Generator().manual_seed(seed)
    n = d["n_train"] + d["n_val"]
    x = torch.randn(n, d["n_features"], generator=g)
    w = torch.randn(d["n_features"], d["n_classes"], generator=g)
    y = (torch.tanh(x @ w) + 0.3 * torch.randn(n, d["n_classes"], generator=g)).argmax(1)
    train = TensorDataset(x[: d["n_train"]], y[: d["n_train"]])
    val = TensorDataset(x[d["n_train"]:], y[d["n_train"]:])
    return (DataLoader(train, batch_size=d["batch_size"], shuffle=True, generator=g),
            DataLoader(val, batch_size=d["batch_size"]))
