import torch


def f(x):
    return (x ** 3).sum()


x = torch.tensor([1.0, 2.0, 3.0])
print(torch.func.grad(f)(x))
print(torch.func.grad(torch.func.grad(lambda t: t ** 3))(torch.tensor(2.0)))
