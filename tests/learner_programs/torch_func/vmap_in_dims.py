import torch
from torch.func import vmap

x = torch.arange(6.0).reshape(2, 3)
y = torch.tensor([10.0, 20.0, 30.0])
print(vmap(torch.add, in_dims=(0, None))(x, y))
print(vmap(torch.sum, in_dims=1)(x))
print(vmap(lambda a: a * 2, out_dims=1)(x))
