import torch
import torch.nn as nn

from .utils import apply_time_mask_

ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU, "silu": nn.SiLU}


class FeatureEncoder(nn.Module):
    """Strided 1-D convolutions over the raw waveform (20 samples -> 1 frame)."""

    def __init__(self, conv_dim, act="gelu"):
        super().__init__()
        Act = ACTIVATIONS[act]
        self.conv = nn.Sequential(
            nn.Conv1d(1, 16, kernel_size=5, stride=5), Act(),
            nn.Conv1d(16, conv_dim, kernel_size=4, stride=4), Act(),
        )

    def forward(self, wav):                      # [B, 1, S] -> [B, C, T]
        return self.conv(wav)


class HubertMini(nn.Module):
    def __init__(self, num_units, conv_dim, encoder_dim, feature_act, nhead, ffn_dim):
        super().__init__()
        self.feature_extractor = FeatureEncoder(conv_dim, feature_act)
        self.post_extract_proj = (nn.Linear(conv_dim, encoder_dim)
                                  if conv_dim != encoder_dim else None)
        self.mask_emb = nn.Parameter(torch.rand(encoder_dim) * 0.1)
        self.pos_conv = nn.Conv1d(encoder_dim, encoder_dim, kernel_size=3, padding=1, groups=4)
        self.encoder = nn.TransformerEncoderLayer(encoder_dim, nhead, ffn_dim, dropout=0.0,
                                                  batch_first=True, norm_first=True)
        self.final_proj = nn.Linear(encoder_dim, num_units)

    def forward(self, wav, mask=None):
        features = self.feature_extractor(wav).transpose(1, 2)       # [B, T, C]
        if self.post_extract_proj is not None:
            features = self.post_extract_proj(features)
        if mask is not None:
            features = apply_time_mask_(features, mask, self.mask_emb)
        x = features + self.pos_conv(features.transpose(1, 2)).transpose(1, 2)
        x = self.encoder(x)
        return self.final_proj(x)                                     # [B, T, units]
