# After WGAN-GP training loops written in PyTorch: critic steps with Adam, the gradient
# penalty at points between real and fake samples kept as a graph by create_graph=True
import torch
from torch import nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
real = torch.randn(6, 2) + 2.0
fake = torch.randn(6, 2)
lambda_gp = 10.0

for step in range(3):
    optimizer.zero_grad()
    eps = torch.rand(6, 1)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = critic(x_hat)
    (grads,) = torch.autograd.grad(outputs=scores, inputs=x_hat,
                                   grad_outputs=torch.ones_like(scores), create_graph=True)
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + lambda_gp * penalty
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.6f}", f"{penalty.item():.6f}")

print(critic[0].weight.grad)
print(critic[2].bias.grad)
