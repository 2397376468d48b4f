import torch

a = torch.randn(5, requires_grad=True)
b = torch.randn(5, requires_grad=True)
c = torch.randn(5, requires_grad=True)


def f(a, b, c):
    prod_1 = a * b  # a and b are saved on CPU
    with torch.autograd.graph.save_on_cpu():
        prod_2 = prod_1 * c  # prod_1 and c are saved on CPU
    y = prod_2 * a  # prod_2 and a are saved on the device
    return y


y = f(a, b, c)
y.sum().backward()
print(torch.allclose(a.grad, 2 * a * b * c), torch.allclose(c.grad, a * a * b))
