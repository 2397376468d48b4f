import torch
# x 和 y 在本笔记中没有定义，取自笔记 003 (x and y come from note 003)
x = torch.randn(3, requires_grad=True)
y = x*2
while y.data.norm() < 1000:
    y = y * 2
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad)
