import torch
# 来自前面的单元格 In [3] (from the earlier cell In [3])
x = torch.ones(3, 3, requires_grad=True)
y = 2*x+1
## y是由x创建的，那么y的梯度呢？
print(y.requires_grad)
