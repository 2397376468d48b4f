import torch

x = torch.linspace(0, 3, 4, requires_grad=True)
y = x * x + torch.sin(x)
y.sum().backward()
print(x.grad)
print(torch.allclose(x.grad, 2 * x.detach() + torch.cos(x.detach())))
