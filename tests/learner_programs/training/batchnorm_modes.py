import torch
from torch import nn

bn = nn.BatchNorm1d(3)
x = torch.randn(8, 3) * 2 + 1
out = bn(x)
print(bn.running_mean, bn.num_batches_tracked)
out.pow(2).sum().backward()
print(bn.weight.grad)
bn.eval()
print(bn(x[:2]))
