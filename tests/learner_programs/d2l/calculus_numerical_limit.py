# d2l.ai 2.4 "Calculus": the derivative of f(x) = 3x^2 - 4x at x = 1 as a limit, then the same
# derivative from autograd (the plotting cells dropped, the autograd check added)
import torch


def f(x):
    return 3 * x ** 2 - 4 * x

for h in 10.0**torch.arange(-1, -6, -1):
    print(f'h={h:.5f}, numerical limit={(f(1+h)-f(1))/h:.5f}')

x = torch.tensor(1.0, requires_grad=True)
y = f(x)
y.backward()
print(x.grad)
