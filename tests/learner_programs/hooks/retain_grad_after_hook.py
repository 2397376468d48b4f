import torch

x = torch.tensor(1., requires_grad=True)
y = x * 2
y.retain_grad()
y.register_hook(lambda g: g * 10)  # registered after retain_grad, still runs first
y.backward()
print(y.grad, x.grad)
