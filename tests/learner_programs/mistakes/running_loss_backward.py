# A running total of the loss kept as a tensor and backpropagated each step
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
total_loss = 0
for step in range(3):
    opt.zero_grad()
    loss = (torch.randn(3) * w).sigmoid().sum()
    total_loss += loss
    print(step, total_loss.item())
    total_loss.backward()
    opt.step()
