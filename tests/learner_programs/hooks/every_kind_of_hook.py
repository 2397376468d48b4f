import torch
from torch import nn

m = nn.Linear(2, 1)
with torch.no_grad():
    m.weight.fill_(0.5)
    m.bias.fill_(0.0)
m.register_forward_pre_hook(lambda mod, inputs: print("module forward pre", inputs))
m.register_forward_hook(lambda mod, inputs, out: print("module forward", out))
m.register_full_backward_pre_hook(lambda mod, go: print("module backward pre", go))
m.register_full_backward_hook(lambda mod, gi, go: print("module backward", gi, go))
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
x.register_hook(lambda g: print("leaf tensor hook", g))
x.register_post_accumulate_grad_hook(lambda t: print("post accumulate", t.grad))


def pack(t):
    print("pack", t)
    return t


def unpack(t):
    print("unpack", t)
    return t


with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    h = m(x).tanh()
h.register_hook(lambda g: print("tensor hook", g))
h.retain_grad()
h.grad_fn.register_prehook(lambda go: print("node pre", go))
h.grad_fn.register_hook(lambda gi, go: print("node post", gi, go))
h.sum().backward()
print(h.grad, x.grad, m.weight.grad)
