import torch.nn.functional as F

from .utils import scatter_sum


def attention_entropy(alpha, dst, num_nodes):
    """Mean (over nodes and heads) entropy of the incoming attention distribution."""
    alpha = alpha.clamp(min=1e-8)              # avoid log(0) for edges whose score underflowed
    ent = -(alpha * alpha.log())
    return scatter_sum(ent, dst, num_nodes).mean()


def node_classification_loss(logits, y, mask, attention_maps, dst, num_nodes, entropy_weight):
    ce = F.cross_entropy(logits[mask], y[mask])
    reg = sum(attention_entropy(a, dst, num_nodes) for a in attention_maps)
    return ce + entropy_weight * reg, ce
