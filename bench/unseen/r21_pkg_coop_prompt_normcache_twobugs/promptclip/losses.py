import torch.nn.functional as F

from .utils import l2_normalize_


def clip_logits(image_features, text_features, logit_scale):
    image_features = l2_normalize_(image_features)
    text_features = l2_normalize_(text_features)
    return logit_scale * image_features @ text_features.t()


def coop_loss(image_features, text_features, labels, logit_scale):
    logits = clip_logits(image_features, text_features, logit_scale)
    return F.cross_entropy(logits, labels), logits
