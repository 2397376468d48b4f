# An epsilon added in place to softmax probabilities to keep log() away from zero
import torch

torch.manual_seed(0)
logits = torch.randn(2, 3, requires_grad=True)
target = torch.tensor([0, 2])
probs = torch.softmax(logits, dim=1)
probs += 1e-8
loss = -probs.log()[torch.arange(2), target].mean()
loss.backward()
