import torch
from torch.func import hessian, jacfwd, jacrev


def f(x):
    return x.sin().sum()


x = torch.randn(4)
h = hessian(f)(x)
print(torch.allclose(h, torch.diag(-x.sin())))
h2 = jacfwd(jacrev(f))(x)
print(torch.allclose(h, h2))
print(h)
