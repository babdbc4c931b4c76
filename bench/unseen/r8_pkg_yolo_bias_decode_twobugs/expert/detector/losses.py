import torch
import torch.nn.functional as F


def box_iou_xywh(a, b, eps=1e-7):
    a1, a2 = a[..., :2] - a[..., 2:] / 2, a[..., :2] + a[..., 2:] / 2
    b1, b2 = b[..., :2] - b[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2
    inter = (torch.min(a2, b2) - torch.max(a1, b1)).clamp(min=0).prod(-1)
    union = a[..., 2:].prod(-1) + b[..., 2:].prod(-1) - inter
    return inter / (union + eps)


def build_targets(boxes, anchors, stride, grid_size):
    """The cell holding the box centre and the anchor with the closest shape are positive."""
    bs = boxes.size(0)
    gx = (boxes[:, 0] / stride).long().clamp(0, grid_size - 1)
    gy = (boxes[:, 1] / stride).long().clamp(0, grid_size - 1)
    ratio = boxes[:, None, 2:] / anchors[None]                         # [bs, na, 2]
    best = torch.max(ratio, 1 / ratio).max(-1).values.argmin(-1)       # [bs]
    obj = torch.zeros(bs, anchors.size(0), grid_size, grid_size)
    obj[torch.arange(bs), best, gy, gx] = 1.0
    return obj, best, gy, gx


def detection_loss(pred, boxes, anchors, stride, obj_weight, box_weight):
    obj_t, a, gy, gx = build_targets(boxes, anchors, stride, pred.size(2))
    pos = pred[torch.arange(pred.size(0)), a, gy, gx]                 # [bs, 5]
    box_loss = (1.0 - box_iou_xywh(pos[:, :4], boxes)).mean()
    obj_loss = F.binary_cross_entropy(pred[..., 4].clamp(1e-6, 1 - 1e-6), obj_t)
    return box_weight * box_loss + obj_weight * obj_loss, box_loss, obj_loss
