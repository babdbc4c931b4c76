import torch.nn as nn
import torch.nn.functional as F


class TiedLinear(nn.Linear):
    """Decoder layer mirroring an encoder layer: W_dec = W_enc^T, own bias."""

    def __init__(self, source: nn.Linear):
        super().__init__(source.out_features, source.in_features, bias=True)
        self._source = (source,)  # tuple: do not register the encoder layer twice

    @property
    def source(self):
        return self._source[0]

    def forward(self, z):
        # use the encoder's weight itself, so both paths train the same tensor
        return F.linear(z, self.source.weight.t(), self.bias)


def make_encoder_layer(din, dout):
    layer = nn.Linear(din, dout)
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer
