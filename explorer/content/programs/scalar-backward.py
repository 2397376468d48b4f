import torch
# x 和 out 在本笔记中没有定义，取自笔记 001 (x and out come from note 001)
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
# i.e 求 d(out)/d(x)
out.backward()
print(x.grad)
