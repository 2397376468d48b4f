import torch


def f(z):
    return (z * z.conj() + z.exp()).real


z = torch.randn(3, dtype=torch.cdouble, requires_grad=True)
print(torch.autograd.gradcheck(f, (z,)))
print(torch.autograd.gradcheck(lambda t: t * t, (z,)))
