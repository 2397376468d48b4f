import torch

x = torch.arange(6.0, requires_grad=True)
y = x.view(2, 3).t()
z = y.reshape(-1).permute(0)
print(y.is_contiguous(), y._base is not None)
(z * torch.arange(6.0)).sum().backward()
print(z)
print(x.grad)
