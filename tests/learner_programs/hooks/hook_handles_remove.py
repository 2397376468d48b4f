import torch

x = torch.ones(3, requires_grad=True)
handles = [x.register_hook(lambda g: g + 1), x.register_hook(lambda g: g * 10)]
(x * 2).sum().backward()
print(x.grad)  # (2 + 1) * 10
for h in handles:
    h.remove()
x.grad = None
(x * 2).sum().backward()
print(x.grad)
