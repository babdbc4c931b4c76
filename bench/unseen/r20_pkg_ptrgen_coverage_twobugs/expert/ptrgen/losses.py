import torch


def pointer_nll(final_dists, tgt_out):
    """Negative log-likelihood of the gold (extended-vocabulary) token at each step."""
    gold = final_dists.gather(2, tgt_out[..., None]).squeeze(-1)
    nll = -torch.log(gold + 1e-12)
    nll.masked_fill_(tgt_out.eq(0), 0.0)          # ignore padding
    return nll.sum() / tgt_out.ne(0).sum()


def coverage_loss(attns, coverages, tgt_out):
    step = torch.minimum(attns, coverages).sum(-1)
    step = step * tgt_out.ne(0)
    return step.sum() / tgt_out.ne(0).sum()
