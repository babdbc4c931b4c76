import math

import torch
import torch.nn as nn


def conv_bn(c_in, c_out, stride):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.SiLU())


class Detect(nn.Module):
    """YOLO-style head: per cell and anchor (x, y, w, h, obj), decoded to pixels."""

    def __init__(self, c_in, anchors, stride, img_size):
        super().__init__()
        self.na, self.no = len(anchors), 5
        self.stride = stride
        self.m = nn.Conv2d(c_in, self.na * self.no, 1)
        n = img_size // stride
        yv, xv = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
        self.register_buffer("grid", torch.stack((xv, yv), 2).view(1, 1, n, n, 2).float())
        self.register_buffer("anchor_grid", torch.tensor(anchors).view(1, self.na, 1, 1, 2))

    def forward(self, feat):
        x = self.m(feat)
        bs, _, ny, nx = x.shape
        x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        xy, wh, conf = x.sigmoid().split((2, 2, 1), 4)
        xy = (xy * 2 - 0.5 + self.grid) * self.stride                         # xy
        wh = (wh * 2) ** 2 * self.anchor_grid                                 # wh
        return torch.cat((xy, wh, conf), 4)                                   # [bs, na, ny, nx, 5]


class TinyYolo(nn.Module):
    def __init__(self, anchors, stride, img_size):
        super().__init__()
        self.backbone = nn.Sequential(conv_bn(1, 8, 2), conv_bn(8, 16, 2), conv_bn(16, 32, 2), conv_bn(32, 32, 1))
        self.detect = Detect(32, anchors, stride, img_size)
        self._initialize_biases(img_size)

    def _initialize_biases(self, img_size):
        # objectness prior: about one object per image
        m = self.detect
        b = m.m.bias.view(m.na, -1)
        cells = (img_size // m.stride) ** 2
        with torch.no_grad():
            b[:, 4] += math.log(1.0 / (cells * m.na))

    def forward(self, imgs):
        return self.detect(self.backbone(imgs))
