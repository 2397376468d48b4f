import torch
from torch import nn

model = nn.Linear(3, 1)
for p in model.parameters():
    p.register_hook(lambda grad: torch.clamp(grad, -0.1, 0.1))

x = torch.randn(10, 3) * 10
loss = model(x).pow(2).mean()
loss.backward()
print(model.weight.grad)
print(model.bias.grad)
