import torch

x = torch.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
m = x.max()
m.backward()
print(m, x.grad)  # the gradient is shared evenly between the tied maxima
x.grad = None
v, i = x.max(dim=0)
v.backward()
print(i, x.grad)
