import torch.nn as nn

from .layers import make_act, make_linear


class ResidualBase(nn.Module):
    """out = residual(x) + shortcut(x)"""

    def __init__(self, din, dout):
        super().__init__()
        self.shortcut = make_linear(din, dout, bias=False) if din != dout else nn.Identity()

    def forward(self, x):
        sc = self.shortcut(x)
        return self.residual(x) + sc


class PreActBlock(ResidualBase):
    """Pre-activation block (He et al. 2016): act -> linear -> act -> linear."""

    def __init__(self, din, dout, act):
        super().__init__(din, dout)
        self.residual = nn.Sequential(
            # the first activation must not overwrite x: the shortcut uses it too
            make_act(act, inplace=False),
            make_linear(din, dout),
            make_act(act),
            make_linear(dout, dout),
        )


class PlainBlock(ResidualBase):
    def __init__(self, din, dout, act):
        super().__init__(din, dout)
        self.residual = nn.Sequential(make_linear(din, dout), make_act(act))


BLOCKS = {"preact": PreActBlock, "plain": PlainBlock}
