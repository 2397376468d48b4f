import torch

x = torch.tensor([2.0, 0.4, 0.06], requires_grad=True)
y = x * x
y.register_hook(lambda g: print("hook saw", g))
y.retain_grad()
v = torch.tensor([1.0, 2.0, 3.0])
y.backward(v)
print(y.grad)
print(x.grad)
