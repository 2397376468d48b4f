import torch

with torch.inference_mode():
    x = torch.ones(3)
    y = x * 2
print(x.is_inference(), y)
x.add_(1)
