import torch
from torch.func import jvp, linearize

x = torch.randn(3, 3)


def fn(t):
    return t.sin()


output, jvp_fn = linearize(fn, x)
tangent = torch.ones(3, 3)
print(torch.allclose(jvp_fn(tangent), jvp(fn, (x,), (tangent,))[1]))
print(torch.allclose(output, x.sin()))
