import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
idx = torch.tensor([0, 0, 1, 0])
y = x[idx]
y.sum().backward()
print(y, x.grad)  # index 0 was used three times
