import torch

# 张量：和 NumPy 一样的数组
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
# 普通的运算；自动求导记下 y 是怎么算出来的
y = (x * x).sum()
print(y)
# 求梯度：dy/dx = 2x
y.backward()
print(x.grad)
# 同样的数，作为 NumPy 数组
print(x.detach().numpy())
# 张量所在的设备：这里是 cpu，有 GPU 时是 cuda
print(x.device)
