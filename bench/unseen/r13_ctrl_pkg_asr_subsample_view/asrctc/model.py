import torch
import torch.nn as nn


class Conv2dSubsampling(nn.Module):
    """Convolutional 2D subsampling (to 1/4 length), after ESPnet."""

    def __init__(self, idim, odim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, odim, 3, 2), nn.ReLU(),
                                  nn.Conv2d(odim, odim, 3, 2), nn.ReLU())
        self.out = nn.Linear(odim * (((idim - 1) // 2 - 1) // 2), odim)

    def forward(self, x, lens):
        x = x.unsqueeze(1)                      # (b, 1, t, f)
        x = self.conv(x)                        # (b, c, t', f')
        b, c, t, f = x.size()
        x = self.out(x.transpose(1, 2).view(b, t, c * f))
        lens = ((lens - 1) // 2 - 1) // 2
        return x, lens


class CTCModel(nn.Module):
    def __init__(self, n_mels, n_tokens, d_model, n_heads, n_layers):
        super().__init__()
        self.subsample = Conv2dSubsampling(n_mels, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 2 * d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.ctc_head = nn.Linear(d_model, n_tokens + 1)

    def forward(self, feats, lens):
        x, lens = self.subsample(feats, lens)
        pad = torch.arange(x.shape[1])[None, :] >= lens[:, None]
        x.masked_fill_(pad[..., None], 0.0)
        x = self.encoder(x, src_key_padding_mask=pad)
        return self.ctc_head(x).log_softmax(-1), lens
