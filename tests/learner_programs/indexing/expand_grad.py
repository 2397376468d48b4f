import torch

b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
e = b.expand(4, 3)
print(e.stride(), e.is_contiguous())
(e * torch.arange(12.0).reshape(4, 3)).sum().backward()
print(b.grad)
