import torch
from torch.func import grad, jvp, vjp


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


def f(x):
    return x.sin().sum()


x = torch.randn(2048)
tangent = torch.randn(2048)
result = hvp(f, (x,), (tangent,))
print(torch.allclose(result, -x.sin() * tangent))
print(torch.allclose(hvp_revrev(f, (x,), (tangent,))[0], result))
