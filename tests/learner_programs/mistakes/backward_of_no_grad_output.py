# A model's output computed under torch.no_grad(), then trained on
import torch

torch.manual_seed(0)
model = torch.nn.Linear(2, 1)
x = torch.randn(4, 2)
with torch.no_grad():
    out = model(x)
loss = out.pow(2).mean()
loss.backward()
