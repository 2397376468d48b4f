import torch

x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
positive = x[x > 0]
print(positive)
positive.pow(2).sum().backward()
print(x.grad)
print(x.nonzero())
