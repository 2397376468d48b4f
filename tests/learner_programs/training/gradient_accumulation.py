import torch
from torch import nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(8, 3)
target = torch.randn(8, 1)
accumulation_steps = 4
optimizer.zero_grad()
for i, (x, t) in enumerate(zip(data.split(2), target.split(2), strict=True)):
    loss = nn.functional.mse_loss(model(x), t) / accumulation_steps
    loss.backward()
    print(i, model.bias.grad)
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
print(model.bias)
