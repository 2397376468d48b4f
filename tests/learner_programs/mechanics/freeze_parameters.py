import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
for param in model[0].parameters():
    param.requires_grad = False

x = torch.randn(5, 4)
loss = model(x).pow(2).sum()
loss.backward()
print(model[0].weight.grad)
print(model[2].weight.grad.shape)
print([p.requires_grad for p in model.parameters()])
