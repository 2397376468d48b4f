# Gradient descent by hand, the update written outside torch.no_grad()
import torch

x = torch.tensor([1.0, 2.0, 3.0])
y = torch.tensor([2.0, 4.0, 6.0])
w = torch.tensor(0.0, requires_grad=True)
for _ in range(3):
    loss = ((w * x - y) ** 2).mean()
    loss.backward()
    w -= 0.01 * w.grad
    w.grad.zero_()
