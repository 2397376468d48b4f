import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
u = y.detach()
z = u * x
z.sum().backward()
print(x.grad)   # u is a constant: dz/dx = u = x**2
print(u.requires_grad, u.grad_fn)
