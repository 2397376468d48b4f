import torch
import torch.autograd.forward_ad as fwAD
from torch import nn
from torch.func import functional_call

model = nn.Linear(5, 5)
input = torch.randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}

with fwAD.dual_level():
    dual_params = {}
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp = fwAD.unpack_dual(out).tangent

print(jvp.shape)
print(torch.allclose(jvp, input @ tangents["weight"].T + tangents["bias"], atol=1e-6))
