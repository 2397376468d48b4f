import torch

with torch.inference_mode():
    features = torch.arange(3.0) * 2
normal = features.clone()
w = torch.ones(3, requires_grad=True)
loss = (w * normal).sum()
loss.backward()
print(features.is_inference(), normal.is_inference())
print(w.grad)
with torch.inference_mode(), torch.inference_mode(False):
    z = torch.ones(2) * 3
print(z.is_inference())
