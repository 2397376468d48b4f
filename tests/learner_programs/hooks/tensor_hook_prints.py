import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
y.register_hook(lambda g: print("gradient reaching y:", g))
z = y.sum() * 2
z.backward()
print(x.grad)
