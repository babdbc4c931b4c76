import torch.nn.functional as F


def forecast_loss(pred, target, delta):
    return F.huber_loss(pred, target, delta=delta)
