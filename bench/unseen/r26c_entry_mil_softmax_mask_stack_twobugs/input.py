"""Train a gated-attention MIL classifier on synthetic slide bags (one bag at a time,
losses averaged over a mini-batch of bags)."""
import torch
import torch.nn.functional as F

from lib import GatedAttentionMIL, make_bags


def evaluate(model, bags):
    model.eval()
    with torch.no_grad():
        losses, correct, art_mass = [], 0, 0.0
        for x, art, y in bags:
            logit, a = model(x, art)
            losses.append(F.binary_cross_entropy_with_logits(logit, y).item())
            correct += int((logit > 0).float().item() == y.item())
            art_mass += a[art].sum().item()
    model.train()
    return sum(losses) / len(losses), correct / len(bags), art_mass


def main():
    torch.manual_seed(0)
    train_bags = make_bags(240, seed=1)
    val_bags = make_bags(120, seed=2)
    model = GatedAttentionMIL(16)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    bags_per_step = 8
    for epoch in range(6):
        order = torch.randperm(len(train_bags), generator=torch.Generator().manual_seed(epoch))
        running = 0.0
        for start in range(0, len(order), bags_per_step):
            bag_losses = []
            for i in order[start:start + bags_per_step].tolist():
                x, art, y = train_bags[i]
                logit, _ = model(x, art)
                bag_losses.append(F.binary_cross_entropy_with_logits(logit, y))
            loss = torch.tensor(bag_losses).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item() * len(bag_losses)
        vloss, vacc, art_mass = evaluate(model, val_bags)
        print(f"epoch {epoch} train_loss {running / len(train_bags):.6f} val_loss {vloss:.6f} "
              f"val_acc {vacc:.6f} artefact_attention {art_mass:.6f}")
    checksum = sum(p.double().abs().sum().item() for p in model.parameters()) + vloss
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
