import torch

with torch.inference_mode():
    t = torch.zeros(2)
print(t)
print(t._version)
