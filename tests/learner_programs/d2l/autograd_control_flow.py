# d2l.ai 2.5 "Automatic Differentiation": gradients through Python control flow, the while loop
# and the if of f(a), and a.grad == d / a; the cells' results printed
import torch


def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c

a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()

print(a.grad == d / a)

# Exercise: change a to a random vector; d is then a vector too
a = torch.randn(size=(3,), requires_grad=True)
d = f(a)
d.sum().backward()
print(a.grad, d / a)
