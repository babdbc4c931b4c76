import torch
from torch.utils.data import Dataset


class SyntheticSet(Dataset):
    """Learnable condensed images (ipc per class) served through the usual Dataset interface."""

    def __init__(self, init_images, labels, noise_std=0.05):
        self.images = init_images.clone().requires_grad_(True)
        self.labels = labels.clone()
        self.noise_std = noise_std
        self.augment = True

    def __len__(self):
        return self.images.size(0)

    def indices_of(self, c):
        return (self.labels == c).nonzero().flatten().tolist()

    def __getitem__(self, i):
        img = self.images[i]
        if self.augment:
            img += self.noise_std * torch.randn_like(img)
        return img, self.labels[i]
