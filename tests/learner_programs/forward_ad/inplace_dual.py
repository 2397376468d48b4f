import torch
import torch.autograd.forward_ad as fwAD

base = torch.zeros(3)
with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 0.0, 0.0]))
    base.copy_(d * 2)   # the tangent flows into base
    base.mul_(d)
    print(fwAD.unpack_dual(base))
    view = base[1:]
    print(fwAD.unpack_dual(view).tangent)
