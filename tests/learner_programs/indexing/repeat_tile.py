import torch

x = torch.tensor([[1.0, 2.0]], requires_grad=True)
r = x.repeat(3, 2)
t = torch.tile(x, (2,))
print(r)
print(t)
(r.sum() + t.sum()).backward()
print(x.grad)
