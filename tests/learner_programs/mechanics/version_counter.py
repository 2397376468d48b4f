import torch

x = torch.ones(3, requires_grad=True)
y = x * 2
print(y._version)
y.add_(1)
print(y._version)
z = y.detach()
z.mul_(2)
print(y._version, y)
w = y[0]
w.zero_()
print(y._version, w._version, y)
