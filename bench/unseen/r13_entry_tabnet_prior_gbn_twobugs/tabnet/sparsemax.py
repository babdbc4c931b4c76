import torch


def sparsemax(z, dim=-1):
    """Sparsemax (Martins & Astudillo, 2016), differentiated by autograd."""
    z = z - z.max(dim=dim, keepdim=True).values
    zs, _ = torch.sort(z, dim=dim, descending=True)
    k = torch.arange(1, z.shape[dim] + 1, dtype=z.dtype, device=z.device)
    shape = [1] * z.dim()
    shape[dim] = -1
    k = k.view(shape)
    cssv = zs.cumsum(dim) - 1
    support = (k * zs) > cssv
    k_z = support.sum(dim=dim, keepdim=True)
    tau = cssv.gather(dim, k_z - 1) / k_z.to(z.dtype)
    return torch.clamp(z - tau, min=0)
