import torch

x = torch.tensor(1.5, requires_grad=True)
y = x ** 4
derivatives = []
g = y
for _ in range(4):
    (g,) = torch.autograd.grad(g, x, create_graph=True)
    derivatives.append(g.item())
print(derivatives)  # 4x^3, 12x^2, 24x, 24
