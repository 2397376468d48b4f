import torch

z = torch.tensor([1 + 1j, 2 - 1j], requires_grad=True)
out = (z * z).sum()
print(out)
out.backward()
