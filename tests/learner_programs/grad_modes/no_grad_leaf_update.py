import torch

w = torch.ones(2, requires_grad=True)
with torch.no_grad():
    w.mul_(3)       # allowed: not recorded
    w[0] = 10.0
print(w, w.is_leaf, w._version)
(w ** 2).sum().backward()
print(w.grad)
