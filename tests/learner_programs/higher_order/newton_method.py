import torch
from torch.autograd.functional import hessian


def f(x):
    return (x[0] - 1) ** 4 + (x[1] + 2) ** 2 + x[0] * x[1]


x = torch.tensor([0.0, 0.0])
for step in range(5):
    x = x.detach().requires_grad_(True)
    g, = torch.autograd.grad(f(x), x)
    H = hessian(f, x)
    x = x - torch.linalg.solve(H, g)
    print(step, x.tolist(), f(x).item())
