import torch

x = torch.arange(12.0).reshape(3, 4).requires_grad_()
y = x[1:, ::2]
print(y)
(y ** 2).sum().backward()
print(x.grad)
