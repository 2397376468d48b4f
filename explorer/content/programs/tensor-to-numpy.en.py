import torch
a = torch.ones(5)
print(a)
# A torch tensor as a NumPy array
b = a.numpy()
print(b)
# Add to one of them, and the other changes too
a.add_(1)
print(a)
print(b)
