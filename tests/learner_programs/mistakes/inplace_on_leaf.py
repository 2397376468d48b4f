import torch

w = torch.ones(3, requires_grad=True)
print(w.is_leaf)
w.add_(1)
