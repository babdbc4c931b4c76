"""wav2vec-2.0-style building blocks: a conv feature encoder whose gradient is scaled down
(`feature_grad_mult`) before it reaches the context network."""
import torch
import torch.nn as nn


class GradMultiply(torch.autograd.Function):
    """Identity in the forward pass, multiplies the gradient by `scale` in the backward pass."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class FeatureEncoder(nn.Module):
    def __init__(self, channels=16):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(1, channels, 5, stride=2), nn.GroupNorm(channels, channels), nn.GELU(),
            nn.Conv1d(channels, channels, 3, stride=2), nn.GELU(),
        )

    def forward(self, wav):
        return self.convs(wav.unsqueeze(1)).transpose(1, 2)  # (B, T', C)


class AudioClassifier(nn.Module):
    def __init__(self, n_classes, channels=16, hidden=32, feature_grad_mult=0.1):
        super().__init__()
        self.feature_extractor = FeatureEncoder(channels)
        self.feature_grad_mult = feature_grad_mult
        self.proj = nn.Linear(channels, hidden)
        self.context = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, wav):
        features = self.feature_extractor(wav)
        if self.feature_grad_mult != 1.0:
            features = GradMultiply.apply(features, self.feature_grad_mult)
        out, _ = self.context(self.proj(features))
        return self.head(out.mean(1))
