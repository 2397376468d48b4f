# Every step's loss kept in a list, and the sum of them all backpropagated each step
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
losses = []
for _ in range(3):
    loss = (torch.randn(3) * w).exp().sum()
    losses.append(loss)
    total = sum(losses)
    total.backward()
