import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3

# create_graph=True records the ops of each backward formula: the gradient gets a graph.
g, = torch.autograd.grad(y, x, create_graph=True)  # 3 * x ** 2
h, = torch.autograd.grad(g, x, create_graph=True)  # 6 * x, through g's graph
k, = torch.autograd.grad(h, x)  # 6: the last order, no graph needed

print(g.item(), h.item(), k.item())
