# A recurrent loop that keeps the last hidden state for the next step without detach()
import torch

torch.manual_seed(0)
W = torch.randn(3, 3, requires_grad=True)
h_prev = torch.zeros(3)
for _ in range(3):
    h = torch.tanh(W @ h_prev + torch.randn(3))
    loss = h.pow(2).sum()
    loss.backward()
    h_prev = h
