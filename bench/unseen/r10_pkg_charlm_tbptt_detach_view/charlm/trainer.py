import math

import torch
import torch.nn.functional as F


class TBPTTTrainer:
    """Truncated BPTT: the recurrent state flows across windows, gradients stop at window borders."""

    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        self.state = None

    def detach_state(self):
        # cut the graph at the window boundary, keeping the values (repackage the hidden state)
        for s in self.state:
            s.detach_()

    def train_step(self, x, y):
        if self.state is None:
            self.state = self.model.init_state(x.size(0))
        else:
            self.detach_state()
        logits, self.state = self.model(x, self.state)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["clip"])
        self.opt.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self, data, windows):
        state = self.model.init_state(data.size(0))
        total, n = 0.0, 0
        for x, y in windows(data, self.cfg["bptt"]):
            logits, state = self.model(x, state)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
            n += y.numel()
        return total / n

    def fit(self, train, val, windows):
        for epoch in range(self.cfg["epochs"]):
            self.model.train()
            self.state = None
            losses = [self.train_step(x, y) for x, y in windows(train, self.cfg["bptt"])]
            self.model.eval()
            val_nll = self.evaluate(val, windows)
            print(f"epoch {epoch} train_nll {sum(losses) / len(losses):.5f} "
                  f"val_nll {val_nll:.5f} val_ppl {math.exp(val_nll):.4f}")
