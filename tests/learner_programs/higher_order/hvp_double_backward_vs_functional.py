# After torch.autograd.functional.hvp's documentation and the double-backward recipe it is
# built on: a Hessian-vector product by two grads, then by hvp itself
import torch
from torch.autograd.functional import hvp


def f(x):
    return x.pow(3).sum() + x[0] * x[1] * x[2]


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = torch.tensor([1.0, -1.0, 0.5])

(g,) = torch.autograd.grad(f(x), x, create_graph=True)
(hv_outputs,) = torch.autograd.grad(g, x, grad_outputs=v, retain_graph=True)
(hv_dot,) = torch.autograd.grad(g @ v, x)
value, hv_functional = hvp(f, x.detach(), v)

print(g)
print(hv_outputs)
print(hv_dot)
print(value, hv_functional)
print(torch.allclose(hv_outputs, hv_functional), torch.equal(hv_outputs, hv_dot))
