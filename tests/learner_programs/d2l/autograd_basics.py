# d2l.ai 2.5 "Automatic Differentiation": the gradient of y = 2 x.x, x.grad == 4 * x, then the
# gradient of another function after x.grad.zero_(); the cells' results printed
import torch

x = torch.arange(4.0)
print(x)

# Can also create x = torch.arange(4.0, requires_grad=True)
x.requires_grad_(True)
print(x.grad)  # The gradient is None by default

y = 2 * torch.dot(x, x)
print(y)

y.backward()
print(x.grad)
print(x.grad == 4 * x)

x.grad.zero_()  # Reset the gradient
y = x.sum()
y.backward()
print(x.grad)
