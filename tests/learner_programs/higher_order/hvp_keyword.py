import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
v = torch.tensor([1.0, 0.5])
(hv,) = torch.autograd.grad(g, x, grad_outputs=v)
print(g, hv)  # H = diag(6x): hv = [6, 6]
