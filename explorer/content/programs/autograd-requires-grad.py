import torch
x1=torch.ones(3,3)
print(x1)
x = torch.ones(2,2,requires_grad=True)
print(x)
