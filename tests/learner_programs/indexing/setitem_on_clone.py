import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x.clone()
y[0] = 0.0              # in-place on a non-leaf copy is fine
y[1:] *= 10
print(y, y.grad_fn)
y.sum().backward()
print(x.grad)
