import torch


def zinb_nll(x, mean, disp, pi, size_factors, ridge_lambda=0.0, eps=1e-10):
    """Negative log-likelihood of a zero-inflated negative binomial (DCA / scDSC form)."""
    mean = mean * size_factors[:, None]
    t1 = torch.lgamma(disp + eps) + torch.lgamma(x + 1.0) - torch.lgamma(x + disp + eps)
    t2 = (disp + x) * torch.log(1.0 + mean / (disp + eps)) + x * (torch.log(disp + eps) - torch.log(mean + eps))
    nb_case = t1 + t2 - torch.log(1.0 - pi + eps)
    zero_nb = torch.pow(disp / (disp + mean + eps), disp)
    zero_case = -torch.log(pi + (1.0 - pi) * zero_nb + eps)
    result = torch.where(x <= 1e-8, zero_case, nb_case)
    if ridge_lambda > 0:
        result = result + ridge_lambda * pi.square()
    return result.mean()
