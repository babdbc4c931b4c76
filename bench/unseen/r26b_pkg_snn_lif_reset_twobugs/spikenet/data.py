import torch


def make_splits(n_train, n_val, n_inputs, n_classes, num_steps, seed):
    """Rate-coded synthetic patterns: each class has a prototype firing-rate vector.

    Returns (train_spikes, train_labels), (val_spikes, val_labels); spikes are [N, T, n_inputs].
    """
    g = torch.Generator().manual_seed(seed)
    protos = torch.rand(n_classes, n_inputs, generator=g)

    def sample(n):
        labels = torch.arange(n) % n_classes
        labels = labels[torch.randperm(n, generator=g)]
        rates = (protos[labels] + 0.15 * torch.randn(n, n_inputs, generator=g)).clamp(0.0, 1.0)
        rates = rates.unsqueeze(1).expand(n, num_steps, n_inputs).contiguous()
        return torch.bernoulli(rates, generator=g), labels

    return sample(n_train), sample(n_val)


def batches(spikes, labels, batch_size):
    for i in range(0, spikes.shape[0], batch_size):
        yield spikes[i:i + batch_size], labels[i:i + batch_size]
