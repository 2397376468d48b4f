import torch
from torch import nn

layer = nn.Linear(2, 2, dtype=torch.cfloat)
x = torch.randn(3, 2, dtype=torch.cfloat)
out = layer(x)
print(out.dtype)
out.abs().sum().backward()
print(layer.weight.grad)
print(layer.bias.grad)
