import torch
import torch.nn.functional as F


def sequence_logps(logits, tokens, loss_mask):
    """Sum of log p(token_t | tokens_<t) over the response positions."""
    logp = F.log_softmax(logits[:, :-1], dim=-1)
    tok_logp = torch.gather(logp, 2, tokens[:, 1:, None]).squeeze(2)
    return (tok_logp * loss_mask[:, 1:]).sum(-1)


def dpo_loss(pol_chosen, pol_rejected, ref_chosen, ref_rejected, beta):
    chosen_rewards = beta * (pol_chosen - ref_chosen)
    rejected_rewards = beta * (pol_rejected - ref_rejected)
    losses = -F.logsigmoid(chosen_rewards - rejected_rewards)
    return losses.mean(), chosen_rewards.detach(), rejected_rewards.detach()
