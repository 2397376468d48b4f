# Random integers made with torch.randint asked to require gradients
import torch

torch.manual_seed(0)
x = torch.rand(3, requires_grad=True)
idx = torch.randint(0, 10, (3,), requires_grad=True)
