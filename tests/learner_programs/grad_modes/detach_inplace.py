import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.detach_()
print(y.requires_grad, y.grad_fn, y.is_leaf)
z = x * y
z.sum().backward()
print(x.grad)
