import torch


def f(x):
    return (x ** 3).sum()


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = torch.tensor([1.0, 0.5, -1.0])

# 第一次反向传播：求出梯度 3 * x ** 2，并把它记录成计算图（create_graph=True）。
y = f(x)
g, = torch.autograd.grad(y, x, create_graph=True)
# 第二次反向传播，沿着 g 的计算图：g @ v 的梯度就是 H @ v。
hv, = torch.autograd.grad(g @ v, x)

# PyTorch 自带的 Hessian-向量积，用来对照。
_, hvp = torch.autograd.functional.hvp(f, x, v)
print(g)
print(hv)
print(hvp)
print(torch.allclose(hv, hvp))
