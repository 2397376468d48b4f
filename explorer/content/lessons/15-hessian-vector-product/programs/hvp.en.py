import torch


def f(x):
    return (x ** 3).sum()


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = torch.tensor([1.0, 0.5, -1.0])

# First backward: the gradient 3 * x ** 2, recorded as a graph (create_graph=True).
y = f(x)
g, = torch.autograd.grad(y, x, create_graph=True)
# Second backward, through g's graph: the gradient of g @ v is H @ v.
hv, = torch.autograd.grad(g @ v, x)

# PyTorch's own Hessian-vector product, to compare.
_, hvp = torch.autograd.functional.hvp(f, x, v)
print(g)
print(hv)
print(hvp)
print(torch.allclose(hv, hvp))
