import torch

critic = torch.nn.Linear(2, 1)  # 一个很小的线性判别器（critic）
with torch.no_grad():
    critic.weight.copy_(torch.tensor([[0.9, 1.2]]))
    critic.bias.zero_()

real = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
fake = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
eps = torch.tensor([[0.25], [0.75]])  # WGAN-GP 中是随机数，这里取定值
x_hat = (eps * real + (1 - eps) * fake).requires_grad_()  # 介于真假样本之间

# 判别器在 x_hat 处的梯度，并保留它的计算图：惩罚项就由它构成。
g, = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
loss.backward()  # 也会沿着 g 的计算图到达 critic.weight

print(g)
print(penalty.item())
print(critic.weight.grad)
print(critic.bias.grad)
