import torch

x = torch.randn(3, requires_grad=True)
y = x * 2 + x ** 2
(jac,) = torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)
print(jac)
print(torch.allclose(jac, torch.diag(2 + 2 * x.detach())))
