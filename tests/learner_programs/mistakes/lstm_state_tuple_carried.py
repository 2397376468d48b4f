# An LSTM cell's state carried on as a tuple from one step to the next without detach()
import torch

torch.manual_seed(0)
cell = torch.nn.LSTMCell(4, 3)
h, c = torch.zeros(1, 3), torch.zeros(1, 3)
for _ in range(3):
    x = torch.randn(1, 4)
    h, c = cell(x, (h, c))
    loss = h.sum()
    loss.backward()
