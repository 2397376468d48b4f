import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
y.backward(create_graph=True)
print(x.grad, x.grad.requires_grad)
first = x.grad.clone()
x.grad = None
first.sum().backward()
print(x.grad)  # 6x
