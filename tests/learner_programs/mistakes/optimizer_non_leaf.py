import torch

w = torch.ones(2, requires_grad=True)
scaled = w * 2
print(scaled.is_leaf)
optimizer = torch.optim.SGD([scaled], lr=0.1)
