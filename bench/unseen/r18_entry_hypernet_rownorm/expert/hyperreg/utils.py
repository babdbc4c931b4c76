import math
from collections import OrderedDict

import torch


def param_shapes(module):
    return OrderedDict((n, p.shape) for n, p in module.named_parameters())


def num_params(shapes):
    return sum(math.prod(s) for s in shapes.values())


def unflatten_params(flat, shapes, row_normalize=True):
    """Turn a (T, P) batch of generated vectors into per-task parameter dicts.

    Weight matrices are row-normalised (weight normalisation with the gain
    folded into the next layer), which keeps the generated target network
    well conditioned early in training.
    """
    out = [OrderedDict() for _ in range(flat.shape[0])]
    offset = 0
    for name, shape in shapes.items():
        n = math.prod(shape)
        block = flat[:, offset:offset + n].view(flat.shape[0], *shape)
        offset += n
        if row_normalize and block.dim() == 3:
            block = block / (block.norm(dim=-1, keepdim=True) + 1e-6)
        for t in range(flat.shape[0]):
            out[t][name] = block[t]
    return out
