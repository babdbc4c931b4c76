import torch
import torch.nn as nn


class FrozenEncoder(nn.Module):
    """Stands in for a pretrained encoder + verbalizer head; never updated."""

    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, cfg.ff, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.verbalizer = nn.Linear(cfg.d_model, cfg.classes)

    def encode(self, h):
        return self.encoder(h)


def build_backbone(cfg):
    torch.manual_seed(1234)  # "pretrained" weights
    bb = FrozenEncoder(cfg)
    bb.requires_grad_(False)
    return bb
