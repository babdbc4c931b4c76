import torch
import torch.nn.functional as F

from .vocab import IGNORE, PAD


def train_epoch(model, optimizer, batch_iter):
    model.train()
    total, count = 0.0, 0
    for words, tags in batch_iter:
        logits = model(words)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tags.reshape(-1), ignore_index=IGNORE)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        # keep the padding vector at zero
        model.embed.weight[PAD] = 0.0
        total += loss.item() * len(words)
        count += len(words)
    return total / count


@torch.no_grad()
def evaluate(model, words, tags):
    model.eval()
    pred = model(words).argmax(-1)
    mask = tags != IGNORE
    return (pred[mask] == tags[mask]).float().mean().item()
