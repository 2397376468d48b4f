import torch
x = torch.ones(2,2,requires_grad=True)
print(x.requires_grad)
# 内容相同，但没有计算历史
y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())
