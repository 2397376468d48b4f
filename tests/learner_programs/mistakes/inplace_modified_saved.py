import torch

a = torch.tensor([1., 2., 3.], requires_grad=True)
out = a.sigmoid()
out.mul_(2)
print(out._version)
out.sum().backward()
