"""python -m tacolite.train"""
import torch
from torch.utils.data import DataLoader

from .data import SyntheticTextMel, TextMelCollate
from .hparams import load_hparams
from .loss import Tacotron2Loss
from .model import Tacotron2


def parse_batch(batch):
    text_padded, input_lengths, mel_padded, gate_padded, output_lengths = batch
    return (text_padded, input_lengths, mel_padded, output_lengths), (mel_padded, gate_padded)


def validate(model, criterion, loader):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for batch in loader:
            x, y = parse_batch(batch)
            loss, _, _ = criterion(model(x), y)
            total += loss.item()
            n += 1
    model.train()
    return total / n


def main():
    hp = load_hparams()
    torch.manual_seed(hp.seed)
    gen = torch.Generator().manual_seed(hp.seed)
    train_set = SyntheticTextMel(hp.n_train, hp, gen)
    val_set = SyntheticTextMel(hp.n_val, hp, gen)
    val_set.templates, val_set.durations = train_set.templates, train_set.durations
    collate = TextMelCollate()
    train_loader = DataLoader(train_set, batch_size=hp.batch_size, shuffle=True, collate_fn=collate,
                              generator=torch.Generator().manual_seed(hp.seed))
    val_loader = DataLoader(val_set, batch_size=hp.batch_size, shuffle=False, collate_fn=collate)

    model = Tacotron2(hp)
    criterion = Tacotron2Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=hp.learning_rate, weight_decay=hp.weight_decay)
    model.train()
    for epoch in range(hp.epochs):
        tot = mel_tot = gate_tot = 0.0
        n = 0
        for batch in train_loader:
            x, y = parse_batch(batch)
            y_pred = model(x)
            loss, mel_loss, gate_loss = criterion(y_pred, y)
            model.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), hp.grad_clip_thresh)
            optimizer.step()
            tot += loss.item()
            mel_tot += mel_loss.item()
            gate_tot += gate_loss.item()
            n += 1
        val_loss = validate(model, criterion, val_loader)
        print(f"epoch {epoch} loss {tot / n:.6f} mel_loss {mel_tot / n:.6f} gate_loss {gate_tot / n:.6f} "
              f"val_loss {val_loss:.6f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
