"""Class-incremental learning with Dark Experience Replay++ (Buzzega et al., 2020).

Three tasks of two classes each (Gaussian clusters); a reservoir buffer stores past
inputs, labels and the network's logits, which later batches are regularised towards.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_tasks(n_tasks=3, classes_per_task=2, n_per_class=96, dim=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = 2.0 * torch.randn(n_tasks * classes_per_task, dim, generator=g)
    tasks = []
    for t in range(n_tasks):
        xs, ys = [], []
        for c in range(t * classes_per_task, (t + 1) * classes_per_task):
            xs.append(centers[c] + 1.2 * torch.randn(n_per_class, dim, generator=g))
            ys.append(torch.full((n_per_class,), c, dtype=torch.long))
        x, y = torch.cat(xs), torch.cat(ys)
        split = int(0.75 * x.shape[0])
        perm = torch.randperm(x.shape[0], generator=g)
        x, y = x[perm], y[perm]
        tasks.append(((x[:split], y[:split]), (x[split:], y[split:])))
    return tasks


class ReservoirBuffer:
    def __init__(self, size, n_features, n_classes, generator):
        self.size = size
        self.gen = generator
        self.num_seen = 0
        self.examples = torch.zeros(size, n_features)
        self.labels = torch.zeros(size, dtype=torch.long)
        self.logits = torch.zeros(size, n_classes)

    def is_empty(self):
        return self.num_seen == 0

    def _slot(self):
        if self.num_seen < self.size:
            return self.num_seen
        r = int(torch.randint(0, self.num_seen + 1, (1,), generator=self.gen))
        return r if r < self.size else -1

    def add_data(self, examples, labels, logits):
        for i in range(examples.shape[0]):
            idx = self._slot()
            self.num_seen += 1
            if idx >= 0:
                self.examples[idx] = examples[i]
                self.labels[idx] = labels[i]
                self.logits[idx] = logits[i]

    def get_data(self, size):
        n = min(self.num_seen, self.size)
        choice = torch.randperm(n, generator=self.gen)[:size]
        return self.examples[choice], self.labels[choice], self.logits[choice]


class DerppTrainer:
    def __init__(self, net, lr, buffer, alpha, beta, minibatch_size):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=lr)
        self.buffer = buffer
        self.alpha, self.beta = alpha, beta
        self.minibatch_size = minibatch_size
        self.loss = nn.CrossEntropyLoss()

    def train_step(self, inputs, labels):
        self.opt.zero_grad()
        outputs = self.net(inputs)
        loss = self.loss(outputs, labels)
        tot_loss = loss.item()
        loss.backward()

        if not self.buffer.is_empty():
            buf_inputs, _, buf_logits = self.buffer.get_data(self.minibatch_size)
            buf_outputs = self.net(buf_inputs)
            loss = self.alpha * F.mse_loss(buf_outputs, buf_logits)
            tot_loss += loss.item()
            loss.backward()

            buf_inputs, buf_labels, _ = self.buffer.get_data(self.minibatch_size)
            buf_outputs = self.net(buf_inputs)
            loss = self.beta * self.loss(buf_outputs, buf_labels)
            tot_loss += loss.item()
            loss.backward()

        self.opt.step()
        self.buffer.add_data(examples=inputs, labels=labels, logits=outputs)
        return tot_loss

    @torch.no_grad()
    def accuracy(self, x, y):
        self.net.eval()
        acc = (self.net(x).argmax(1) == y).float().mean().item()
        self.net.train()
        return acc

    def fit(self, tasks, epochs, batch_size, generator):
        for t, ((x_tr, y_tr), _) in enumerate(tasks):
            losses = []
            for _ in range(epochs):
                perm = torch.randperm(x_tr.shape[0], generator=generator)
                for i in range(0, x_tr.shape[0], batch_size):
                    idx = perm[i:i + batch_size]
                    losses.append(self.train_step(x_tr[idx], y_tr[idx]))
            accs = [self.accuracy(x_te, y_te) for _, (x_te, y_te) in tasks[:t + 1]]
            print(f"task {t}  mean loss {sum(losses) / len(losses):.4f}  "
                  f"acc per task {' '.join(f'{a:.4f}' for a in accs)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--buffer-size", type=int, default=64)
    p.add_argument("--alpha", type=float, default=0.3)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    args = p.parse_args()

    torch.manual_seed(0)
    tasks = make_tasks()
    net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 6))
    buffer = ReservoirBuffer(args.buffer_size, 10, 6, torch.Generator().manual_seed(1))
    trainer = DerppTrainer(net, args.lr, buffer, args.alpha, args.beta, args.batch_size)
    trainer.fit(tasks, args.epochs, args.batch_size, torch.Generator().manual_seed(2))
    print(f"buffer filled {min(buffer.num_seen, buffer.size)}  seen {buffer.num_seen}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in net.parameters()):.4f}")


if __name__ == "__main__":
    main()
