import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
x = torch.randn(2, 3)
model.eval()
out = model(x)
print(out.requires_grad, model.training)
with torch.no_grad():
    out2 = model(x)
print(out2.requires_grad, torch.equal(out, out2))
model.train()
print(model(x))
