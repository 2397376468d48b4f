import torch


def make_counter(name):
    count = 0

    def hook(grad):
        nonlocal count
        count += 1
        print(name, "call", count, grad)
    return hook


x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(make_counter("x"))
for _ in range(3):
    (x * x).sum().backward()
print(x.grad)
