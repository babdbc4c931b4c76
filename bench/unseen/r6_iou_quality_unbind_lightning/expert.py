"""Single-box detector with an IoU-aware quality branch (GFL / VarifocalNet style), written
as a LightningModule-like class and trained by a small hand-written loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ANCHOR = torch.tensor([0.5, 0.5, 0.4, 0.4])  # cx, cy, w, h


def box_iou(x1, y1, x2, y2, gt):
    iw = (torch.min(x2, gt[:, 2]) - torch.max(x1, gt[:, 0])).clamp(min=0)
    ih = (torch.min(y2, gt[:, 3]) - torch.max(y1, gt[:, 1])).clamp(min=0)
    inter = iw * ih
    area = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    gt_area = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
    return inter / (area + gt_area - inter + 1e-6)


class LitDetector(nn.Module):
    def __init__(self, in_dim, n_classes, hidden=64, lr=3e-3):
        super().__init__()
        self.lr = lr
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.box_head = nn.Linear(hidden, 4)
        self.quality_head = nn.Linear(hidden, 1)
        self.cls_head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h = self.body(x)
        return self.box_head(h), self.quality_head(h).squeeze(-1), self.cls_head(h)

    @staticmethod
    def encode(boxes):
        cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
        w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        return torch.stack([(cx - ANCHOR[0]) / ANCHOR[2], (cy - ANCHOR[1]) / ANCHOR[3],
                            torch.log(w / ANCHOR[2]), torch.log(h / ANCHOR[3])], dim=1)

    @staticmethod
    def decode(deltas):
        cx = ANCHOR[0] + deltas[:, 0] * ANCHOR[2]
        cy = ANCHOR[1] + deltas[:, 1] * ANCHOR[3]
        w = ANCHOR[2] * torch.exp(deltas[:, 2])
        h = ANCHOR[3] * torch.exp(deltas[:, 3])
        return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=1)

    def training_step(self, batch, batch_idx):
        x, gt_boxes, labels = batch
        deltas, quality, cls_logits = self(x)
        boxes = self.decode(deltas).detach()
        x1, y1, x2, y2 = boxes.unbind(-1)
        x1.clamp_(0, 1)
        y1.clamp_(0, 1)
        x2.clamp_(0, 1)
        y2.clamp_(0, 1)
        iou = box_iou(x1, y1, x2, y2, gt_boxes)
        loss_box = F.smooth_l1_loss(deltas, self.encode(gt_boxes), beta=0.1)
        loss_quality = F.binary_cross_entropy_with_logits(quality, iou)
        loss_cls = F.cross_entropy(cls_logits, labels)
        return loss_box + loss_quality + loss_cls

    @torch.no_grad()
    def validation_step(self, batch):
        x, gt_boxes, labels = batch
        deltas, quality, cls_logits = self(x)
        boxes = self.decode(deltas).clamp(0, 1)
        iou = box_iou(*boxes.unbind(-1), gt_boxes)
        err = (torch.sigmoid(quality) - iou).abs().mean()
        return iou.mean().item(), err.item(), (cls_logits.argmax(1) == labels).float().mean().item()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def make_dataset(n, in_dim, n_classes, proj):
    c = 0.1 + 0.8 * torch.rand(n, 2)
    wh = 0.2 + 0.4 * torch.rand(n, 2)
    boxes = torch.cat([c - wh / 2, c + wh / 2], dim=1).clamp(0, 1)
    labels = torch.randint(0, n_classes, (n,))
    code = torch.cat([boxes, F.one_hot(labels, n_classes).float()], dim=1)
    x = code @ proj + 0.05 * torch.randn(n, in_dim)
    return x, boxes, labels


def fit(module, train, val, epochs, batch_size):
    optimizer = module.configure_optimizers()
    n = train[0].size(0)
    for epoch in range(epochs):
        module.train()
        perm = torch.randperm(n)
        total = 0.0
        for batch_idx, start in enumerate(range(0, n, batch_size)):
            idx = perm[start:start + batch_size]
            loss = module.training_step(tuple(t[idx] for t in train), batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        module.eval()
        iou, q_err, acc = module.validation_step(val)
        print(f"epoch {epoch} loss {total / (batch_idx + 1):.4f} val iou {iou:.4f} "
              f"quality err {q_err:.4f} acc {acc:.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    IN_DIM, N_CLASSES = 32, 5
    proj = torch.randn(4 + N_CLASSES, IN_DIM)
    train = make_dataset(512, IN_DIM, N_CLASSES, proj)
    val = make_dataset(256, IN_DIM, N_CLASSES, proj)
    model = LitDetector(IN_DIM, N_CLASSES)
    fit(model, train, val, epochs=6, batch_size=32)
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")
