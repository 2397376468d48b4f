import torch


def fn(grad):
    print("hook got", grad)
    return grad * 2


t = torch.tensor(1., requires_grad=True).sin()
t.cos_()
t.register_hook(fn)  # sees the gradient w.r.t. the cos_'d value
t.backward()

x = torch.tensor(0.5, requires_grad=True)
u = x.sin()
u.register_hook(fn)  # registered before the in-place op
u.cos_()
u.backward()
print(x.grad)
