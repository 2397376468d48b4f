import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3

# create_graph=True 会记录每个求导公式里的运算：梯度也有了自己的计算图。
g, = torch.autograd.grad(y, x, create_graph=True)  # 3 * x ** 2
h, = torch.autograd.grad(g, x, create_graph=True)  # 6 * x，沿着 g 的计算图
k, = torch.autograd.grad(h, x)  # 6：最后一阶，不必再建图

print(g.item(), h.item(), k.item())
