import torch

a = torch.rand(10, requires_grad=True)
print(a.is_leaf)
b = torch.rand(10, requires_grad=True).double()
print(b.is_leaf)  # created by an operation
c = torch.rand(10, requires_grad=True) + 2
print(c.is_leaf)
d = torch.rand(10).requires_grad_()
print(d.is_leaf)
e = torch.rand(10).double()
print(e.is_leaf, e.requires_grad)
f = torch.rand(10, requires_grad=True, dtype=torch.float64)
print(f.is_leaf)
