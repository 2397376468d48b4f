import torch
x=torch.randn(1)
print(x)
print(x.item())
