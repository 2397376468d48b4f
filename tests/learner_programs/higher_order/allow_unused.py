import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
z = torch.tensor([3.0], requires_grad=True)
y = (x * 2).sum()
gx, gz = torch.autograd.grad(y, [x, z], allow_unused=True)
print(gx, gz)
y = (x * 2).sum()
gx, gz = torch.autograd.grad(y, [x, z], materialize_grads=True)
print(gx, gz)
