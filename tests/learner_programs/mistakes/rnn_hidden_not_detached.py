# A recurrent loop that carries its hidden state on without detach()
import torch

torch.manual_seed(0)
W = torch.randn(3, 3, requires_grad=True)
h = torch.zeros(3)
for _ in range(2):
    x = torch.randn(3)
    h = torch.tanh(W @ h + x)
    loss = h.sum()
    loss.backward()
