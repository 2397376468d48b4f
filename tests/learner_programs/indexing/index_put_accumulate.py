import torch

vals = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
base = torch.zeros(4)
out = base.index_put((torch.tensor([0, 0, 3]),), vals, accumulate=True)
print(out)
(out * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
print(vals.grad)
