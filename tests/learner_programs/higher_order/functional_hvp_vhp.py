import torch
from torch.autograd.functional import hvp, vhp


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(vhp(pow_reducer, inputs, v))
print(hvp(pow_reducer, inputs, v))
