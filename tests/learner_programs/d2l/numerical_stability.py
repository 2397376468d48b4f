# d2l.ai "Numerical Stability and Initialization": the sigmoid's vanishing gradient, a product of
# 100 random matrices exploding, and Xavier initialisation; the d2l.plot call replaced by
# printing the gradient at a few points
import torch
from torch import nn

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.sigmoid(x)
y.backward(torch.ones_like(x))
print(x.grad[::20])

M = torch.normal(0, 1, size=(4,4))
print('a single matrix \n',M)
for i in range(100):
    M = torch.mm(M,torch.normal(0, 1, size=(4, 4)))

print('after multiplying 100 matrices\n', M)

# Xavier initialization keeps the variance of outputs and gradients near 1
layer = nn.Linear(256, 256)
nn.init.xavier_normal_(layer.weight)
h = torch.randn(64, 256)
for i in range(10):
    h = layer(h)
print(h.std())
