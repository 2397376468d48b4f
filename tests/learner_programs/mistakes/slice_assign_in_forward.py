# A module's forward zeroing one column of a sigmoid output in place with out[:, 0] = 0
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        out[:, 0] = 0
        return out


torch.manual_seed(0)
net = Net()
loss = net(torch.randn(4, 3)).sum()
loss.backward()
