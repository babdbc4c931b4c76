"""Synthetic TTS corpus: every symbol has a mel template and a duration in frames."""
import torch


class SyntheticTextMel:
    def __init__(self, n_items, hp, gen):
        self.templates = torch.randn(hp.n_symbols, hp.n_mel_channels, generator=gen)
        self.durations = torch.randint(1, 4, (hp.n_symbols,), generator=gen)
        self.items = []
        for _ in range(n_items):
            n = int(torch.randint(3, 7, (1,), generator=gen))
            text = torch.randint(1, hp.n_symbols, (n,), generator=gen)
            frames = []
            for s in text.tolist():
                d = int(self.durations[s])
                ramp = torch.linspace(-0.3, 0.3, d)[:, None]
                frames.append(self.templates[s][None, :] + ramp)
            mel = torch.cat(frames, 0).t().contiguous()  # [n_mel, T]
            mel = mel + 0.05 * torch.randn(mel.shape, generator=gen)
            self.items.append((text, mel))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class TextMelCollate:
    """Zero-pads text and mel, sorts by text length (as in NVIDIA's TextMelCollate)."""

    def __call__(self, batch):
        input_lengths, ids_sorted = torch.sort(
            torch.LongTensor([len(x[0]) for x in batch]), dim=0, descending=True)
        max_input_len = int(input_lengths[0])
        text_padded = torch.zeros(len(batch), max_input_len, dtype=torch.long)
        for i, j in enumerate(ids_sorted.tolist()):
            text = batch[j][0]
            text_padded[i, : text.size(0)] = text
        n_mel = batch[0][1].size(0)
        max_target_len = max(x[1].size(1) for x in batch)
        mel_padded = torch.zeros(len(batch), n_mel, max_target_len)
        gate_padded = torch.zeros(len(batch), max_target_len)
        output_lengths = torch.zeros(len(batch), dtype=torch.long)
        for i, j in enumerate(ids_sorted.tolist()):
            mel = batch[j][1]
            mel_padded[i, :, : mel.size(1)] = mel
            gate_padded[i, mel.size(1) - 1:] = 1
            output_lengths[i] = mel.size(1)
        return text_padded, input_lengths, mel_padded, gate_padded, output_lengths
