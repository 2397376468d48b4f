import torch

x = torch.tensor([-2.0, -1.0, 0.5, 3.0], requires_grad=True)
y = x.masked_fill(x < 0, 0.0)
z = torch.where(x > 1, x ** 2, -x)
(y + z).sum().backward()
print(y, z)
print(x.grad)
