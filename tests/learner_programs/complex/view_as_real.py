import torch

x = torch.randn(3, 2, requires_grad=True)
z = torch.view_as_complex(x)
print(z)
w = z * (2 - 1j)
r = torch.view_as_real(w)
r.pow(2).sum().backward()
print(r)
print(x.grad)
