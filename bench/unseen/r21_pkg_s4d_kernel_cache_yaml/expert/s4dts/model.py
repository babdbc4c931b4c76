import math

import torch
import torch.nn as nn


class S4DKernel(nn.Module):
    """Diagonal SSM convolution kernel (S4D-Lin initialisation)."""

    def __init__(self, d_model, d_state=16, dt_min=1e-3, dt_max=1e-1):
        super().__init__()
        H, N2 = d_model, d_state // 2
        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        C = torch.randn(H, N2, dtype=torch.cfloat)
        self.log_dt = nn.Parameter(log_dt)
        self.C = nn.Parameter(torch.view_as_real(C))
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(H, N2)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(N2).float().repeat(H, 1))
        for p in self.parameters():
            p._is_ssm = True

    def forward(self, L):
        dt = torch.exp(self.log_dt)                                  # (H)
        C = torch.view_as_complex(self.C)                            # (H, N/2)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag           # (H, N/2)
        dtA = A * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(L)                      # (H, N/2, L)
        C = C * (torch.exp(dtA) - 1.0) / A
        return 2 * torch.einsum("hn,hnl->hl", C, torch.exp(K)).real  # (H, L)


class S4D(nn.Module):
    def __init__(self, d_model, d_state, dropout=0.0, cache_kernel=False):
        super().__init__()
        self.D = nn.Parameter(torch.randn(d_model))
        self.kernel = S4DKernel(d_model, d_state)
        self.activation = nn.GELU()
        self.dropout = nn.Dropout(dropout)
        self.output_linear = nn.Sequential(nn.Conv1d(d_model, 2 * d_model, 1), nn.GLU(dim=-2))
        self.cache_kernel = cache_kernel
        self._k_cache = {}

    def get_kernel(self, L):
        # the kernel is a function of trainable parameters: only reuse it when nothing is trained
        if self.cache_kernel and not torch.is_grad_enabled():
            if L not in self._k_cache:
                self._k_cache[L] = self.kernel(L)
            return self._k_cache[L]
        self._k_cache.clear()
        return self.kernel(L)

    def forward(self, u):                                            # (B, H, L)
        L = u.size(-1)
        k = self.get_kernel(L)
        k_f = torch.fft.rfft(k, n=2 * L)
        u_f = torch.fft.rfft(u, n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]
        y = y + u * self.D.unsqueeze(-1)
        y = self.dropout(self.activation(y))
        return self.output_linear(y)


class S4Classifier(nn.Module):
    def __init__(self, d_in, num_classes, d_model, d_state, n_layers, dropout, cache_kernel):
        super().__init__()
        self.encoder = nn.Linear(d_in, d_model)
        self.layers = nn.ModuleList(
            [S4D(d_model, d_state, dropout, cache_kernel) for _ in range(n_layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(n_layers)])
        self.decoder = nn.Linear(d_model, num_classes)

    def forward(self, x):                                            # (B, L, d_in)
        x = self.encoder(x).transpose(-1, -2)                        # (B, H, L)
        for layer, norm in zip(self.layers, self.norms):
            z = layer(x)
            x = norm((z + x).transpose(-1, -2)).transpose(-1, -2)
        return self.decoder(x.mean(dim=-1))
