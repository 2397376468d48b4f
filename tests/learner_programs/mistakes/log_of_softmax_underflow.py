# log(softmax(x)) instead of log_softmax: a probability underflows to 0, loss inf, gradient nan
import torch

logits = torch.tensor([[0.0, 200.0, -200.0]], requires_grad=True)
probs = torch.softmax(logits, dim=1)
loss = -torch.log(probs[0, 2])
loss.backward()
print(loss)
print(logits.grad)
