import torch
from torch import nn
from torch.func import functional_call, grad

model = nn.Linear(3, 1)
params = {k: v.detach() for k, v in model.named_parameters()}
x = torch.randn(4, 3)
t = torch.randn(4, 1)


def compute_loss(params, x, t):
    y = functional_call(model, params, (x,))
    return nn.functional.mse_loss(y, t)


grads = grad(compute_loss)(params, x, t)
for name, g in grads.items():
    print(name, g)
print(model.weight.grad)
