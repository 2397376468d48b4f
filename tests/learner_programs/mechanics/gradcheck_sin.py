import torch
from torch.autograd import gradcheck

inputs = (torch.randn(4, dtype=torch.double, requires_grad=True),)
print(gradcheck(torch.sin, inputs, eps=1e-6, atol=1e-4))
print(torch.autograd.gradgradcheck(torch.sin, inputs))
