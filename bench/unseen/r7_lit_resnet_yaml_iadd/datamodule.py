import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset


def make_bars(n, size, seed):
    """Noisy images with a bar in one of 4 orientations (the label)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    x = 0.4 * torch.randn(n, 1, size, size, generator=g)
    offs = torch.randint(2, size - 2, (n,), generator=g)
    idx = torch.arange(size)
    for i in range(n):
        o = int(offs[i])
        if y[i] == 0:
            x[i, 0, o, :] += 1.0
        elif y[i] == 1:
            x[i, 0, :, o] += 1.0
        elif y[i] == 2:
            x[i, 0, idx, idx] += 1.0
        else:
            x[i, 0, idx, size - 1 - idx] += 1.0
    return x, y


class BarsDataModule(pl.LightningDataModule):
    def __init__(self, n_train, n_val, image_size, batch_size):
        super().__init__()
        self.n_train, self.n_val, self.size, self.batch_size = n_train, n_val, image_size, batch_size

    def setup(self, stage=None):
        self.train_set = TensorDataset(*make_bars(self.n_train, self.size, seed=1))
        self.val_set = TensorDataset(*make_bars(self.n_val, self.size, seed=2))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True,
                          generator=torch.Generator().manual_seed(3))

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=64)
