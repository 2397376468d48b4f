import torch

z = torch.tensor(1 + 2j, requires_grad=True)
w = z * z
g, = torch.autograd.grad(w, z, grad_outputs=torch.tensor(1 + 0j))
print(w, g)  # conj(dw/dz) = conj(2z)
g2, = torch.autograd.grad((z * z).real, z)
print(g2)
