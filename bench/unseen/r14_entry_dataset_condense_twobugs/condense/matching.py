import torch
import torch.nn.functional as F


def layer_distance(gs, gr):
    """Dataset-Condensation distance: 1 - cosine similarity per output unit, summed."""
    if gs.dim() == 1:
        return torch.zeros((), dtype=gs.dtype)
    gs, gr = gs.flatten(1), gr.flatten(1)
    return (1 - (gs * gr).sum(-1) / (gs.norm(dim=-1) * gr.norm(dim=-1) + 1e-6)).sum()


def match_loss(gw_syn, gw_real):
    return sum(layer_distance(gs, gr) for gs, gr in zip(gw_syn, gw_real))


def class_gradient(net, x, y, create_graph=False):
    params = list(net.parameters())
    loss = F.cross_entropy(net(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=create_graph)
    if not create_graph:
        grads = tuple(g.detach() for g in grads)
    return grads
