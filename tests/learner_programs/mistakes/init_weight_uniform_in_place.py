# Weights created with requires_grad=True, then initialised in place with uniform_()
import torch

torch.manual_seed(0)
w = torch.zeros(3, 2, requires_grad=True)
b = torch.zeros(2, requires_grad=True)
w.uniform_(-0.1, 0.1)
