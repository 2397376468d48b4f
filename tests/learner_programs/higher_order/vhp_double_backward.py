# After torch.autograd.functional.vhp's documentation: v^T H for a function of two inputs,
# by vhp and by a double backward through the first gradient
import torch
from torch.autograd.functional import vhp


def f(x, y):
    return (x ** 2 * y + torch.exp(y) * x).sum()


x = torch.tensor([1.0, 2.0])
y = torch.tensor([0.5, -1.0])
vx = torch.tensor([1.0, 0.0])
vy = torch.tensor([0.0, 2.0])

value, (vhp_x, vhp_y) = vhp(f, (x, y), (vx, vy))
print(value)
print(vhp_x, vhp_y)

xr = x.clone().requires_grad_(True)
yr = y.clone().requires_grad_(True)
gx, gy = torch.autograd.grad(f(xr, yr), (xr, yr), create_graph=True)
hx, hy = torch.autograd.grad((gx * vx).sum() + (gy * vy).sum(), (xr, yr))
print(hx, hy)
print(torch.allclose(hx, vhp_x), torch.allclose(hy, vhp_y))
