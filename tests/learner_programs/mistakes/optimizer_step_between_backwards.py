# Two losses through the same weight, the optimizer stepping between their backward calls
import torch

w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
loss1 = (w * w).sum()
loss2 = (w ** 3).sum()
loss1.backward()
opt.step()
loss2.backward()
