import torch

x = torch.randn(3, requires_grad=True)
y = x * 2          # MulBackward0 saves only the scalar
y.add_(1)          # so changing y in place is fine
y.sum().backward()
print(y)
print(x.grad)
