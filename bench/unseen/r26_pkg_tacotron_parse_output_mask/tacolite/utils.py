import torch


def get_mask_from_lengths(lengths):
    max_len = int(torch.max(lengths).item())
    ids = torch.arange(0, max_len)
    return ids < lengths.unsqueeze(1)
