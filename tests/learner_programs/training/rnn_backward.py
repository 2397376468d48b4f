import torch
from torch import nn

rnn = nn.RNN(input_size=3, hidden_size=4, batch_first=True)
x = torch.randn(2, 5, 3, requires_grad=True)
output, h_n = rnn(x)
print(output.shape, h_n.shape)
h_n.sum().backward()
print(x.grad[0, -1], x.grad[0, 0])
print(rnn.weight_hh_l0.grad.norm())
