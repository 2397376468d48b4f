import torch
import torch.autograd.forward_ad as fwAD

x = torch.tensor([0.0, 1.0, 2.0])
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.tensor([1.0, 1.0, 1.0]))
    out = torch.exp(d) * 2
    unpacked = fwAD.unpack_dual(out)
    print(unpacked.primal)
    print(unpacked.tangent)
    primal, tangent = unpacked
    print(torch.equal(primal, tangent))
