import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y1 = x * 3
y2 = x ** 2
g, = torch.autograd.grad([y1, y2], [x], [torch.ones(2), torch.tensor([1.0, 0.1])],
                         retain_graph=True)
print(g)
torch.autograd.backward([y1.sum(), y2.sum()])
print(x.grad)
