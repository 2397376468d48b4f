import torch
from torch import nn

model = nn.Linear(4, 2)
x = torch.randn(16, 4) * 100
loss = model(x).pow(2).mean()
loss.backward()
total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print(total)
print(torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters())))
torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(model.weight.grad)
