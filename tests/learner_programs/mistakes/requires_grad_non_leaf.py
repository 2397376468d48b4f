import torch

x = torch.ones(2, requires_grad=True)
y = x + 1
print(y.requires_grad)
y.requires_grad = False
