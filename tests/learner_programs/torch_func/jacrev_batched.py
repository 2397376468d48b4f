import torch
from torch.func import jacrev, vmap

weight = torch.randn(3, 4)
bias = torch.randn(3)


def predict(weight, bias, x):
    return torch.nn.functional.linear(x, weight, bias).tanh()


x = torch.randn(2, 4)
jac = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
print(jac.shape)
print(jac[0])
