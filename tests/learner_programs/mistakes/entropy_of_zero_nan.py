# An entropy with a zero probability: the loss and a gradient become nan, with no error
import torch

p = torch.tensor([0.0, 0.5, 0.5], requires_grad=True)
loss = -(p * p.log()).sum()
loss.backward()
print(loss)
print(p.grad)
