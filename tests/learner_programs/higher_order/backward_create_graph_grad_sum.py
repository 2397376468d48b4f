# After torch.Tensor.backward's documentation of create_graph=True: the derivative written to
# .grad has a graph of its own, so .grad.sum().backward() differentiates it again
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
y.backward(create_graph=True)
print(x.grad)  # 3x^2
print(x.grad.requires_grad, x.grad.grad_fn is not None)

x.grad.sum().backward()
print(x.grad)  # 3x^2 + 6x: the second backward adds 6x to .grad
