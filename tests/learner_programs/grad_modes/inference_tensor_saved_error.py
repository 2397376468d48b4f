import torch

with torch.inference_mode():
    t = torch.ones(3) * 2
w = torch.ones(3, requires_grad=True)
print(t.is_inference(), w.is_inference())
loss = (w * t).sum()
