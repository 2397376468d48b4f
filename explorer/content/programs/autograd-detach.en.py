import torch
x = torch.ones(2,2,requires_grad=True)
print(x.requires_grad)
# The same data, without history
y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())
