import torch

w = torch.tensor([1.0, -1.0], requires_grad=True)  # 线性模型的权重
xs = torch.tensor([[1.0, 1.0], [1.0, 2.0], [2.0, 1.0], [3.0, 1.0]])  # 4 个样本
ys = torch.tensor([1.0, 1.0, -1.0, 1.0])  # 它们的目标值


def loss_fn(w, x, y):
    error = x @ w - y  # 一个样本的误差，或一批样本各自的误差
    return error ** 2


# 1. Python 循环：每个样本调用一次 torch.autograd.grad，再按行堆叠起来。
grads = []
for x, y in zip(xs, ys, strict=True):
    g, = torch.autograd.grad(loss_fn(w, x, y), w)
    grads.append(g)
loop_grads = torch.stack(grads)

# 2. torch.func：对单个样本的损失求梯度，再用 vmap 映射到整批样本上。
vmap_grads = torch.func.vmap(torch.func.grad(loss_fn), in_dims=(None, 0, 0))(w, xs, ys)
print(torch.allclose(loop_grads, vmap_grads))

# 对整批的平均损失做一次 backward，得到的是各样本梯度的平均值。
batch_loss = loss_fn(w, xs, ys).mean()
batch_loss.backward()
print(torch.allclose(loop_grads.mean(dim=0), w.grad))


def losses(w):
    return loss_fn(w, xs, ys)  # 每个样本的损失：一个向量


# 它的雅可比矩阵，分别用反向模式和前向模式求；以及平均损失的 Hessian 矩阵。
jac_rev = torch.func.jacrev(losses)(w)
jac_fwd = torch.func.jacfwd(losses)(w)
print(torch.allclose(jac_rev, jac_fwd))
hess = torch.func.hessian(lambda w: losses(w).mean())(w)
print(hess)
