import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x.exp()
loss1 = h.sum()
loss2 = (h * 2).sum()
loss1.backward()
print(x.grad)
loss2.backward()
