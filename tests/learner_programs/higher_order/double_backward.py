import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
dy_dx, = torch.autograd.grad(y, x, create_graph=True)
print(dy_dx)  # 3x^2 = 12
d2y_dx2, = torch.autograd.grad(dy_dx, x)
print(d2y_dx2)  # 6x = 12
