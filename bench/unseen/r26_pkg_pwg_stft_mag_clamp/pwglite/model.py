from torch import nn


class Generator(nn.Module):
    """Conditioning conv + two x4 transposed-conv upsamplers (hop 16) + output conv."""

    def __init__(self, n_mels, channels):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(n_mels, channels, 3, padding=1), nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(channels, channels // 2, 8, stride=4, padding=2), nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(channels // 2, channels // 4, 8, stride=4, padding=2), nn.LeakyReLU(0.2),
            nn.Conv1d(channels // 4, 1, 7, padding=3), nn.Tanh(),
        )

    def forward(self, mel):
        return self.net(mel).squeeze(1)
