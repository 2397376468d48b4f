# After the higher-order gradients of torch.autograd.grad's documentation: sin's first, second
# and third derivatives (cos, -sin, -cos) by repeated grad with create_graph=True
import torch

x = torch.tensor([0.0, 0.5, 1.0], requires_grad=True)
y = torch.sin(x)
(d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
(d2,) = torch.autograd.grad(d1.sum(), x, create_graph=True)
(d3,) = torch.autograd.grad(d2.sum(), x)
print(d1)
print(d2)
print(d3)
xs = x.detach()
print(torch.allclose(d1, xs.cos()), torch.allclose(d2, -xs.sin()), torch.allclose(d3, -xs.cos()))
