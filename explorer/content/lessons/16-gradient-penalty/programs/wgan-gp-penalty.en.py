import torch

critic = torch.nn.Linear(2, 1)  # a tiny linear critic
with torch.no_grad():
    critic.weight.copy_(torch.tensor([[0.9, 1.2]]))
    critic.bias.zero_()

real = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
fake = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
eps = torch.tensor([[0.25], [0.75]])  # random in WGAN-GP; fixed here
x_hat = (eps * real + (1 - eps) * fake).requires_grad_()  # between real and fake

# The critic's gradient at x_hat, kept as a graph: the penalty is made of it.
g, = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
loss.backward()  # reaches critic.weight through g's graph too

print(g)
print(penalty.item())
print(critic.weight.grad)
print(critic.bias.grad)
