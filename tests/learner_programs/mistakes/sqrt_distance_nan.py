# A Euclidean distance between two equal points: sqrt's gradient at 0
import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([1.0, 2.0])
dist = torch.sqrt(((a - b) ** 2).sum())
dist.backward()
print(a.grad)
