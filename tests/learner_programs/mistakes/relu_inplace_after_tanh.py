# An in-place ReLU after tanh, which keeps its output for backward
import torch

x = torch.randn(2, 3)
w = torch.randn(3, 3, requires_grad=True)
h = torch.tanh(x @ w)
h = torch.nn.functional.relu(h, inplace=True)
loss = h.sum()
loss.backward()
