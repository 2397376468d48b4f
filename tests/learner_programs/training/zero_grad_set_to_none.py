import torch
from torch import nn

model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.ones(1, 2)).sum().backward()
print(model.weight.grad)
optimizer.zero_grad()
print(model.weight.grad)
model(torch.ones(1, 2)).sum().backward()
optimizer.zero_grad(set_to_none=False)
print(model.weight.grad)
