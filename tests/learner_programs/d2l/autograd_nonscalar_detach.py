# d2l.ai 2.5 "Automatic Differentiation": backward for non-scalar variables with a gradient
# argument, and detaching computation with y.detach(); the cells' results printed
import torch

x = torch.arange(4.0, requires_grad=True)

y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
print(x.grad)

x.grad.zero_()
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
print(x.grad == u)

x.grad.zero_()
y.sum().backward()
print(x.grad == 2 * x)
