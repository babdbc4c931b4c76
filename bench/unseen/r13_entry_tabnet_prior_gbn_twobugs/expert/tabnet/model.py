import torch
import torch.nn as nn

from .layers import AttentiveTransformer, FeatTransformer


class TabNet(nn.Module):
    def __init__(self, input_dim, output_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3,
                 virtual_batch_size=64, epsilon=1e-15):
        super().__init__()
        self.input_dim, self.n_d, self.n_steps = input_dim, n_d, n_steps
        self.gamma, self.epsilon = gamma, epsilon
        self.initial_bn = nn.BatchNorm1d(input_dim, momentum=0.01)
        shared_fc = nn.Linear(input_dim, 2 * (n_d + n_a), bias=False)
        self.initial_splitter = FeatTransformer(input_dim, n_d + n_a, shared_fc, virtual_batch_size)
        self.feat_transformers = nn.ModuleList(
            [FeatTransformer(input_dim, n_d + n_a, shared_fc, virtual_batch_size) for _ in range(n_steps)])
        self.att_transformers = nn.ModuleList(
            [AttentiveTransformer(n_a, input_dim, virtual_batch_size) for _ in range(n_steps)])
        self.final = nn.Linear(n_d, output_dim)

    def forward(self, x):
        x = self.initial_bn(x)
        prior = torch.ones(x.shape[0], self.input_dim)
        M_loss = 0.0
        res = 0.0
        att = self.initial_splitter(x)[:, self.n_d:]
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss = M_loss + torch.mean(torch.sum(M * torch.log(M + self.epsilon), dim=1))
            prior = torch.mul(self.gamma - M, prior)
            masked_x = M * x
            out = self.feat_transformers[step](masked_x)
            d = torch.relu(out[:, :self.n_d])
            res = res + d
            att = out[:, self.n_d:]
        return self.final(res), M_loss / self.n_steps

    @torch.no_grad()
    def explain(self, x):
        """Aggregate attention masks (feature importances) as in the TabNet paper."""
        x = self.initial_bn(x)
        prior = torch.ones(x.shape[0], self.input_dim)
        imp = torch.zeros(x.shape[0], self.input_dim)
        att = self.initial_splitter(x)[:, self.n_d:]
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            prior = prior * (self.gamma - M)
            out = self.feat_transformers[step](M * x)
            imp += M * torch.relu(out[:, :self.n_d]).sum(1, keepdim=True)
            att = out[:, self.n_d:]
        return imp.sum(0) / imp.sum()
