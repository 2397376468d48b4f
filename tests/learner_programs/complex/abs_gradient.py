import torch

z = torch.tensor(3 + 4j, requires_grad=True)
r = z.abs()
r.backward()
print(r, z.grad)  # z / |z|: the conjugate Wirtinger convention
