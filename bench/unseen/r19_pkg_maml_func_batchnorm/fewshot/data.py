import torch


class PrototypeTasks:
    """N-way K-shot tasks: each class is a fixed random 1xHxW prototype, samples add noise."""

    def __init__(self, num_classes, size, gen, noise=0.8):
        self.protos = torch.randn(num_classes, 1, size, size, generator=gen)
        self.noise = noise
        self.gen = gen

    def sample(self, n_way, k_shot, k_query):
        classes = torch.randperm(self.protos.size(0), generator=self.gen)[:n_way]
        def draw(k):
            x = self.protos[classes].repeat_interleave(k, 0)
            x = x + self.noise * torch.randn(x.shape, generator=self.gen)
            y = torch.arange(n_way).repeat_interleave(k)
            return x, y
        xs, ys = draw(k_shot)
        xq, yq = draw(k_query)
        return xs, ys, xq, yq
