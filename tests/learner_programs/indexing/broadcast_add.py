import torch

x = torch.ones(3, 1, requires_grad=True)
y = torch.ones(1, 4, requires_grad=True)
z = x + y * torch.arange(4.0)
print(z.shape)
z.sum().backward()
print(x.grad)  # summed over the broadcast dimension
print(y.grad)
