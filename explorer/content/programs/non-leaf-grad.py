import torch
# 来自前面的单元格 In [3] 和 In [6] (from the earlier cells In [3] and In [6])
x = torch.ones(3, 3, requires_grad=True)
y = 2*x+1
z = y*y*3
z_mean = z.mean()
z_mean.backward()
print(y.grad)
