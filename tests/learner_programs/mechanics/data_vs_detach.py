import torch

a = torch.tensor([1., 2., 3.], requires_grad=True)
out = a.sigmoid()
c = out.data
c.zero_()
print(out)  # out was modified, autograd did not notice
out.sum().backward()
print(a.grad)  # silently wrong
