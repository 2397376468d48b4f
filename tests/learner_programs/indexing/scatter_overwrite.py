import torch

x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
base = torch.zeros(3)
out = base.scatter(0, torch.tensor([0, 2, 0, 1]), x)
print(out)
(out * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(x.grad)
