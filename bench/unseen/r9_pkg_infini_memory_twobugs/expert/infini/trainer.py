import torch
import torch.nn.functional as F


class SegmentTrainer:
    """Processes each long sequence segment by segment, one optimizer step per segment."""

    def __init__(self, model, lr, clip=1.0):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        self.clip = clip

    def _segment_loss(self, seg, nxt):
        logits = self.model(seg)
        # predict the next segment's tokens position by position
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), nxt.reshape(-1))

    def train_step(self, batch):
        self.model.train()
        self.model.reset_memory()
        losses = []
        for s in range(batch.size(1) - 1):
            loss = self._segment_loss(batch[:, s], batch[:, s + 1])
            self.opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.opt.step()
            losses.append(loss.item())
        return losses

    @torch.no_grad()
    def evaluate(self, data):
        self.model.eval()
        self.model.reset_memory()
        per_seg = []
        for s in range(data.size(1) - 1):
            per_seg.append(self._segment_loss(data[:, s], data[:, s + 1]).item())
        return per_seg

    def fit(self, train, val, epochs, batch_size, gen):
        for epoch in range(epochs):
            perm = torch.randperm(train.size(0), generator=gen)
            seg_losses = []
            for i in range(0, train.size(0), batch_size):
                seg_losses.append(self.train_step(train[perm[i:i + batch_size]]))
            mean = torch.tensor(seg_losses).mean(0)
            val_losses = self.evaluate(val)
            print(f"epoch {epoch} train per-segment " + " ".join(f"{v:.4f}" for v in mean.tolist())
                  + " | val " + " ".join(f"{v:.4f}" for v in val_losses))
