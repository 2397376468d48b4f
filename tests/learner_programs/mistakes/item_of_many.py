import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = x * 2
print(loss.sum().item())
print(loss.item())
