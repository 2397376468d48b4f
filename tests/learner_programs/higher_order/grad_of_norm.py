import torch

w = torch.tensor([3.0, 4.0], requires_grad=True)
n = w.norm()
(g,) = torch.autograd.grad(n, w, create_graph=True)
print(n, g)  # w / |w|
g.pow(2).sum().backward()  # |g|^2 = 1 everywhere: its gradient is zero
print(w.grad)
