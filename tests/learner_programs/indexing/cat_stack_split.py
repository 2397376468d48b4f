import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
c = torch.cat([a, b, a])
s = torch.stack([a, a * 2])
parts = c.split([2, 3])
loss = parts[0].sum() * 2 + parts[1].pow(2).sum() + s.sum()
loss.backward()
print(c, s)
print(a.grad, b.grad)
first, second = torch.chunk(c, 2)
print(first, second)
