import torch

# 一个任务 y = 2 * x：支持集用来适应，查询集用来检验适应后的权重。
x_support = torch.tensor([-1.0, 1.0])
y_support = torch.tensor([-2.0, 2.0])
x_query = torch.tensor([1.0, 3.0])
y_query = torch.tensor([2.0, 6.0])
alpha = 0.1  # 内层一步的学习率

w = torch.tensor(1.0, requires_grad=True)  # 模型 y = w * x，适应之前

# MAML：内层一步的梯度保留自己的计算图（create_graph=True）。
inner_loss = ((w * x_support - y_support) ** 2).mean()
g, = torch.autograd.grad(inner_loss, w, create_graph=True)
w_fast = w - alpha * g  # 在支持集上做一步梯度下降
outer_loss = ((w_fast * x_query - y_query) ** 2).mean()
outer_loss.backward()  # 经过 w_fast，也沿着 g 的计算图，回到 w
maml_grad = w.grad.clone()

# 一阶 MAML：同样的一步，但用 g.detach()，只取 g 的值，不要它的计算图。
w.grad = None
w_first = w - alpha * g.detach()
first_loss = ((w_first * x_query - y_query) ** 2).mean()
first_loss.backward()
first_order_grad = w.grad.clone()

print(maml_grad)
print(first_order_grad)
print(maml_grad - first_order_grad)
