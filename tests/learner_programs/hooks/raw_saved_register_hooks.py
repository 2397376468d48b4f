import torch

calls = []


def pack_hook(x):
    calls.append("pack")
    return x * 1


def unpack_hook(x):
    calls.append("unpack")
    return x


x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
print(calls)
y.sum().backward()
print(calls)
print(torch.allclose(x.grad, 2 * x))
