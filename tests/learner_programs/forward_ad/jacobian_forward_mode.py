import torch
from torch.autograd.functional import jacobian


def f(x):
    return torch.stack([x[0] * x[1], x[1].sin(), x.sum()])


x = torch.tensor([1.0, 2.0])
print(jacobian(f, x))
print(jacobian(f, x, vectorize=True, strategy="forward-mode"))
