import torch

x = torch.tensor([0.3, -1.0, 2.0, 0.7], requires_grad=True)
values, indices = torch.topk(x, 2)
(values * torch.tensor([1.0, 10.0])).sum().backward()
print(values, indices, x.grad)
s, order = x.sort(descending=True)
print(s, order)
