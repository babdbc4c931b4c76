from torch import nn


def mlp(dims, last_act=False):
    layers = []
    for i in range(len(dims) - 1):
        layers.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class AutoEncoder(nn.Module):
    def __init__(self, n_features, hidden, z_dim):
        super().__init__()
        self.encoder = mlp([n_features, *hidden, z_dim])
        self.decoder = mlp([z_dim, *reversed(hidden), n_features])

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z
