import torch

x = torch.randn(3)
w = torch.randn(3, requires_grad=True)
print((x * 2).requires_grad, (x * w).requires_grad)
print((x * w).grad_fn)
n = torch.tensor([1, 2, 3])
print(n.requires_grad, n.dtype)
print(w.dtype.is_floating_point)
