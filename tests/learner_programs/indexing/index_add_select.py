import torch

x = torch.ones(5, 3)
t = torch.tensor([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]], requires_grad=True)
index = torch.tensor([0, 4, 2])
y = x.index_add(0, index, t)
print(y)
y.pow(2).sum().backward()
print(t.grad)
s = torch.index_select(t, 1, torch.tensor([2, 0]))
print(s)
