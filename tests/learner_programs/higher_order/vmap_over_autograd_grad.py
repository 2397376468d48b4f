import torch

x = torch.randn(3, requires_grad=True)
y = x.sin()


def vjp(v):
    return torch.autograd.grad(y, x, v, retain_graph=True)[0]


jacobian = torch.func.vmap(vjp)(torch.eye(3))
print(torch.allclose(jacobian, torch.diag(x.cos())))
