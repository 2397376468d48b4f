import torch

x = torch.arange(4.0)
with torch.inference_mode():
    v = x.view(2, 2)
    fresh = torch.zeros(2)
print(x.is_inference(), v.is_inference(), fresh.is_inference())
print(v)
print(fresh + 1)
