import torch

w = torch.ones(2, requires_grad=True)
x = torch.ones(2, dtype=torch.float64)
print(w.dtype, x.dtype)
y = torch.dot(w, x)
