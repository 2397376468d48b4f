import torch
import torch.autograd.forward_ad as fwAD

x = torch.ones(2)
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.ones(2))
    print(fwAD.unpack_dual(d).tangent)
e = fwAD.make_dual(x, torch.ones(2))
