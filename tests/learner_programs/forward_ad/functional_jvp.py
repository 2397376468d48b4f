import torch
from torch.autograd.functional import jvp, vjp


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(4, 4)
v = torch.ones(4, 4)
print(jvp(exp_reducer, inputs, v))
print(vjp(exp_reducer, inputs, torch.ones(4)))
