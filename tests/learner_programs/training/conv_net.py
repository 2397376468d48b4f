import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 3 * 3, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc(x)


net = Net()
print(net)
x = torch.randn(2, 1, 8, 8)
out = net(x)
loss = F.cross_entropy(out, torch.tensor([0, 1]))
loss.backward()
print(loss)
print(net.conv1.weight.grad.shape, net.conv1.bias.grad)
