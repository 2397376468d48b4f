import torch

z = torch.tensor([1 + 1j, -2 + 0.5j], requires_grad=True)
a = z.angle()
a.sum().backward()
print(a, z.grad)
