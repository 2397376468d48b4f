import torch

a = torch.tensor([1., 2.], requires_grad=True)
b = a * 3
handle = b.grad_fn.register_prehook(lambda gO: (gO[0] * 2,))
b.sum().backward()
print(a.grad)
handle.remove()
