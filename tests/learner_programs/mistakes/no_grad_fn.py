import torch

x = torch.ones(2)
loss = (x * 2).sum()
print(loss.requires_grad, loss.grad_fn)
loss.backward()
