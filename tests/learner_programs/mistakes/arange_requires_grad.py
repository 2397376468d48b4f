# Asking for gradients of a tensor made by arange: its values are integers
import torch

x = torch.arange(5, requires_grad=True)
y = (x * 2).sum()
