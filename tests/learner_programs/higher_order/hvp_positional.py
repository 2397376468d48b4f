import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
v = torch.tensor([1.0, 2.0, 3.0])
(g,) = torch.autograd.grad(y, x, v)
print(g)
(g2,) = torch.autograd.grad(outputs=x.sin(), inputs=x, grad_outputs=torch.ones(3))
print(g2)
