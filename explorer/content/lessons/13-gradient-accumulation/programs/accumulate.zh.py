import torch

# 四个小批量，每批两个样本，取自 y = 2 * x。
xs = torch.tensor([[1.0, 2.0], [3.0, 4.0], [1.0, 3.0], [2.0, 2.0]])
ys = 2 * xs

w = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.01)
accum_steps = 2  # 梯度先累加、再更新一次所用的小批量个数

for i in range(4):
    x, y = xs[i], ys[i]
    loss = ((w * x - y) ** 2).mean()
    # 除以 accum_steps：k 个批量的梯度加起来正好是它们的平均。
    (loss / accum_steps).backward()  # 加到 w.grad 上，从不覆盖它
    if (i + 1) % accum_steps == 0:
        optimizer.step()  # 用两个批量的梯度更新一次
        optimizer.zero_grad()  # w.grad 变回 None，留给后面的批量

print(w)
