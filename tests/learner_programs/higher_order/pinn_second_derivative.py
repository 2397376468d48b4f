# After physics-informed neural network examples: u''(x) of a tiny MLP by two grads with
# create_graph=True, trained so that u'' = -sin(x) with u = 0 at both ends
import math

import torch
from torch import nn

torch.manual_seed(0)
u = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(u.parameters(), lr=1e-2)
x = torch.linspace(0.0, math.pi, 8).reshape(-1, 1).requires_grad_(True)
ends = torch.tensor([[0.0], [math.pi]])

for step in range(3):
    optimizer.zero_grad()
    out = u(x)
    (du,) = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out), create_graph=True)
    (d2u,) = torch.autograd.grad(du, x, grad_outputs=torch.ones_like(du), create_graph=True)
    residual = d2u + torch.sin(x)
    loss = residual.pow(2).mean() + u(ends).pow(2).mean()
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.6f}")

print(d2u.detach().squeeze())
print(u[0].weight.grad.squeeze())
