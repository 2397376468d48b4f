import torch

a = torch.tensor([1., 2., 3.], requires_grad=True)
out = a.sigmoid()
c = out.detach()
c.zero_()
print(out)  # modified by c.zero_()
out.sum().backward()  # the in-place change is detected
