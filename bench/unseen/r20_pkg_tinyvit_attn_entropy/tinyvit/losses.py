import torch.nn.functional as F


def attention_entropy(attn_maps, eps):
    """Mean Shannon entropy of the attention distributions (per head, per query)."""
    total = 0.0
    for attn in attn_maps:
        attn.clamp_(min=eps)                 # avoid log(0)
        total = total + (-(attn * attn.log()).sum(-1)).mean()
    return total / len(attn_maps)


def vit_loss(logits, targets, attn_maps, entropy_weight, eps):
    ce = F.cross_entropy(logits, targets)
    ent = attention_entropy(attn_maps, eps)
    return ce + entropy_weight * ent, ce, ent
