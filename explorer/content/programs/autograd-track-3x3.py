import torch
# 创建一个张量，指定requires_grad = True这个属性，用来追踪其计算历史：
x = torch.ones(3, 3, requires_grad=True)
print(x)
# 对张量进行一个简单的一次函数操作：
y = 2*x+1
print(y)
# 再对y进行一个较复杂的函数操作：
z = y*y*3
z_mean = z.mean()
print(z,z_mean)
