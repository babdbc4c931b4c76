import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchHardTripletLoss(nn.Module):
    """Batch-hard triplet loss (Hermans et al., 2017, 'In Defense of the Triplet Loss')."""

    def __init__(self, margin=0.3):
        super().__init__()
        self.margin = margin

    def forward(self, emb, labels):
        dist = torch.cdist(emb, emb)
        same = labels[:, None] == labels[None, :]
        dist_ap = (dist * same).max(dim=1).values
        dist[same] = float("inf")
        dist_an = dist.min(dim=1).values
        loss = F.relu(dist_ap - dist_an + self.margin).mean()
        active = (dist_ap - dist_an + self.margin > 0).float().mean()
        return loss, active
