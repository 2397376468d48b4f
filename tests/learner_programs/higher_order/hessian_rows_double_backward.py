# After torch.autograd.functional.hessian's documentation: the Hessian of a small function,
# then the same matrix row by row, each row a grad of one entry of the first gradient
import torch
from torch.autograd.functional import hessian


def f(x):
    return x[0] ** 2 * x[1] + x[1] ** 3 + torch.exp(x[0] * x[2])


x = torch.tensor([0.5, -1.0, 2.0])
H = hessian(f, x)
print(H)

xr = x.clone().requires_grad_(True)
(g,) = torch.autograd.grad(f(xr), xr, create_graph=True)
rows = [torch.autograd.grad(g[i], xr, retain_graph=True)[0] for i in range(3)]
H_rows = torch.stack(rows)
print(H_rows)
print(torch.allclose(H, H_rows), torch.allclose(H, H.T))
