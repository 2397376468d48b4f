import torch

x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
c = x.cumsum(0)
p = x.cumprod(0)
(c.sum() + p[-1]).backward()
print(c, p)
print(x.grad)
