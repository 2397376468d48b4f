import torch

x = torch.ones(3, requires_grad=True)
y = x * 2
print(y)
y.backward()
