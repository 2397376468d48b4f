import torch
from torch.func import jvp, vjp

x = torch.randn([5])
(_, vjpfunc) = vjp(lambda x: x.sin().sum(), x)
grad = vjpfunc(torch.tensor(1.))[0]
print(torch.allclose(grad, x.cos()))

x = torch.randn([5])
(_, jvp_out) = jvp(lambda x: x * torch.tensor([1., 2., 3, 4, 5]), (x,), (torch.ones(5),))
print(jvp_out)
