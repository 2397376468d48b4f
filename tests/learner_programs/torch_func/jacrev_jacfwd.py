import torch
from torch.func import jacfwd, jacrev

x = torch.randn(5)
jacobian = jacrev(torch.sin)(x)
expected = torch.diag(torch.cos(x))
print(torch.allclose(jacobian, expected))

jacobian_f = jacfwd(torch.sin)(x)
print(torch.allclose(jacobian_f, expected))


def f(x, y):
    return x + y ** 2


x, y = torch.randn(3), torch.randn(3)
print(jacrev(f, argnums=1)(x, y))
