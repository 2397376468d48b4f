# One entry of a weight that requires grad set to zero by indexing, w[0] = 0
import torch

w = torch.ones(3, requires_grad=True)
x = torch.tensor([1.0, 2.0, 3.0])
loss = (w * x).sum()
loss.backward()
print(w.grad)
w[0] = 0
