import torch

x = torch.randn(3)
print(x.requires_grad)
x.requires_grad_()
y = (x * 2).sum()
print(y.requires_grad, y.grad_fn)
x.requires_grad_(False)
z = (x * 2).sum()
print(z.requires_grad, z.grad_fn)
