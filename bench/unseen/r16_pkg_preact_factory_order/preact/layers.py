from functools import partial

import torch.nn as nn

# Activation registry: in-place variants save memory on the residual branch.
ACTIVATIONS = {
    "relu": partial(nn.ReLU, inplace=True),
    "lrelu": partial(nn.LeakyReLU, negative_slope=0.1, inplace=True),
    "gelu": nn.GELU,
}


def make_act(name, **overrides):
    return ACTIVATIONS[name](**overrides)


def make_linear(din, dout, bias=True):
    return nn.Linear(din, dout, bias=bias)
