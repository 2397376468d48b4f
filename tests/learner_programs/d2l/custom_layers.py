# d2l.ai 6.5 "Custom Layers": CenteredLayer without parameters and MyLinear with nn.Parameter
# (its forward reads .data, so no gradient reaches them); the cells' results printed, and a
# backward pass through each net added to show which parameters get a gradient
import torch
from torch import nn
from torch.nn import functional as F


class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()

layer = CenteredLayer()
print(layer(torch.tensor([1.0, 2, 3, 4, 5])))

net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())

Y = net(torch.rand(4, 8))
print(Y.mean())

class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)

linear = MyLinear(5, 3)
print(linear.weight)

print(linear(torch.rand(2, 5)))

net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
print(net(torch.rand(2, 64)))

Y = nn.Sequential(nn.Linear(8, 128), CenteredLayer())(torch.rand(4, 8))
(Y ** 2).sum().backward()
out = net(torch.rand(2, 64))
print(out.requires_grad, net[0].weight.grad)
