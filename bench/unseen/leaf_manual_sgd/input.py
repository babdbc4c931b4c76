import torch

torch.manual_seed(5)

# linear regression from scratch, no nn.Module
true_w = torch.tensor([[2.0], [-3.4], [0.5]])
X = torch.randn(100, 3)
y = X @ true_w + 4.2 + 0.01 * torch.randn(100, 1)

w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

for epoch in range(30):
    pred = X @ w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item():.6f}")

print("w", [round(v, 4) for v in w.detach().flatten().tolist()], "b", round(b.item(), 4))
