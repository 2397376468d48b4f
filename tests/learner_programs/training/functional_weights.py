import torch
import torch.nn.functional as F

W1 = torch.randn(4, 3, requires_grad=True)
b1 = torch.zeros(4, requires_grad=True)
W2 = torch.randn(1, 4, requires_grad=True)
x = torch.randn(5, 3)
target = torch.randn(5, 1)
for step in range(10):
    h = F.relu(F.linear(x, W1, b1))
    loss = F.mse_loss(F.linear(h, W2), target)
    loss.backward()
    with torch.no_grad():
        for p in (W1, b1, W2):
            p -= 0.05 * p.grad
            p.grad.zero_()
    print(step, round(loss.item(), 6))
