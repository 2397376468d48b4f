import torch

x = torch.ones(2, 2, requires_grad=True)
a, b = (x * 2).unbind(0)
print(a, b)
a.mul_(2)
