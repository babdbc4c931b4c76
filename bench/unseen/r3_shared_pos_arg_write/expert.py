# One encoder, two ViT-style decoders reading the same latent tokens (reconstruction of
# two views). The helper that adds the decoder's positional embedding writes into its
# argument. Based on https://github.com/thuanz123/enhancing-transformers/issues/11
# (`token += self.de_pos_embedding` in ViTDecoder: "Above error will occur when backwarding,
# as the quant is modified by the above inplace operation" when two decoders share quant).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(27)

N_TOK, DIM, PATCH = 8, 24, 12


def add_position(token, pos):
    token = token + pos
    return token


class ViTDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.de_pos_embedding = nn.Parameter(torch.randn(1, N_TOK, DIM) * 0.5)
        self.block = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))
        self.to_pixel = nn.Linear(DIM, PATCH)

    def forward(self, token):
        x = add_position(token, self.de_pos_embedding)
        x = x + self.block(x)
        return self.to_pixel(x)


encoder = nn.Sequential(nn.Linear(PATCH, DIM), nn.GELU(), nn.Linear(DIM, DIM))
decoder_a = ViTDecoder()
decoder_b = ViTDecoder()
params = list(encoder.parameters()) + list(decoder_a.parameters()) + list(decoder_b.parameters())
opt = torch.optim.Adam(params, lr=3e-3)

view_a = torch.randn(64, N_TOK, PATCH)
view_b = view_a.flip(1) + 0.1 * torch.randn(64, N_TOK, PATCH)

for step in range(20):
    idx = torch.randint(0, 64, (16,))
    quant = encoder(view_a[idx])
    rec_a = decoder_a(quant)
    rec_b = decoder_b(quant)
    loss_a = F.mse_loss(rec_a, view_a[idx])
    loss_b = F.mse_loss(rec_b, view_b[idx])
    loss = loss_a + loss_b
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"step {step} loss_a {loss_a.item():.6f} loss_b {loss_b.item():.6f}")
