import torch

x = torch.ones(2, requires_grad=True)
y = x * 3
z = y.sum()
z.backward()
print(x.grad)
print(y.grad)  # None, with a warning: y is not a leaf
print(y.is_leaf, y.retains_grad)
