# A running total written as total = total + loss, backpropagated every step
import torch

torch.manual_seed(0)
w = torch.randn(2, requires_grad=True)
total = torch.zeros(())
for _ in range(3):
    loss = (w * torch.randn(2)).tanh().sum()
    total = total + loss
    with torch.no_grad():
        w -= 0.1 * w
    total.backward()
