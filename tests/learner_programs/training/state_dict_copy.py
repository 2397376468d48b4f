import torch
from torch import nn

a = nn.Linear(2, 2)
b = nn.Linear(2, 2)
print(torch.equal(a.weight, b.weight))
b.load_state_dict(a.state_dict())
print(torch.equal(a.weight, b.weight))
for name, t in a.state_dict().items():
    print(name, t.shape, t.requires_grad)
