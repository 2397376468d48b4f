import torch
import torch.autograd.forward_ad as fwAD


def f(x):
    return torch.stack([x[0] ** 2, x[0] * x[1], x[1].exp()])


x = torch.tensor([1.0, 0.5])
columns = []
with fwAD.dual_level():
    for i in range(2):
        direction = torch.zeros(2)
        direction[i] = 1.0
        out = f(fwAD.make_dual(x, direction))
        columns.append(fwAD.unpack_dual(out).tangent)
print(torch.stack(columns, dim=1))
