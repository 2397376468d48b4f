import torch
from torch.func import grad


def loss(w, b, x):
    y = x @ w + b
    return y.pow(2).mean(), y


x = torch.randn(4, 3)
w = torch.randn(3)
b = torch.tensor(0.5)
(gw, gb), y = grad(loss, argnums=(0, 1), has_aux=True)(w, b, x)
print(gw)
print(gb)
print(y)
