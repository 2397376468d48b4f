import torch
# 再构造一个例子：
x = torch.randn(3, requires_grad=True)

y = x*2
print(x.shape)
while y.data.norm() < 1000:
    y = y * 2
print(y)
