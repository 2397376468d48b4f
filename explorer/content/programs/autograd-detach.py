import torch
# 来自前面的代码 (from an earlier snippet)
x = torch.ones(2,2,requires_grad=True)
print(x.requires_grad)
y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())
