import torch


def make_customers(n, d, gen):
    """Synthetic purchase data: ~45% of customers never come back (label 0), the others spend a
    lognormal amount whose location depends on the features."""
    x = torch.randn(n, d, generator=gen)
    w_buy = torch.randn(d, generator=gen) / d ** 0.5
    w_val = torch.randn(d, generator=gen) / d ** 0.5
    p_return = torch.sigmoid(x @ w_buy - 0.2)
    returns = torch.rand(n, generator=gen) < p_return
    log_value = 1.0 + x @ w_val + 0.5 * torch.randn(n, generator=gen)
    y = torch.where(returns, log_value.exp(), torch.zeros(n))
    return x, y


def split(x, y, n_val):
    return (x[n_val:], y[n_val:]), (x[:n_val], y[:n_val])
