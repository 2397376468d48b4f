# d2l.ai, "Lazy Initialization": the shapes of a network's parameters are found on its first call
import torch
from torch import nn

net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print(net[0].weight)
X = torch.rand(2, 20)
out = net(X)
print(net[0].weight.shape)
print(out.shape)
print(type(net[0]).__name__, type(net[2]).__name__)
loss = out.sum()
loss.backward()
print(net[0].weight.grad.shape)
