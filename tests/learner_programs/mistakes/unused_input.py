import torch

x = torch.ones(2, requires_grad=True)
unused = torch.ones(2, requires_grad=True)
y = (x * 2).sum()
torch.autograd.grad(y, [x, unused])
