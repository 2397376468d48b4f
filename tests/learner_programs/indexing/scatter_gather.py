import torch

src = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
index = torch.tensor([[0, 1, 2], [2, 0, 0]])
out = torch.zeros(3, 3).scatter_add(0, index, src)
print(out)
(out * torch.arange(9.0).reshape(3, 3)).sum().backward()
print(src.grad)

t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
g = torch.gather(t, 1, torch.tensor([[0, 0], [1, 0]]))
g.sum().backward()
print(g, t.grad)
