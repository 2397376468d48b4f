import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

models = [nn.Linear(3, 2) for _ in range(4)]
params, buffers = stack_module_state(models)
base_model = nn.Linear(3, 2, device="meta")  # its shapes only


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


x = torch.randn(5, 3)
out = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
print(out.shape)
print(torch.allclose(out[1], models[1](x), atol=1e-6))
