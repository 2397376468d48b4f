import torch

x = torch.tensor([2.0], requires_grad=True)
y = x ** 3
y.backward(retain_graph=True)
print(x.grad)  # 3 * x**2 = 12
y.backward()
print(x.grad)  # accumulated: 24
