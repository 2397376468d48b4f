# A squared error left as one value per sample: no .mean() before backward()
import torch

pred = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
target = torch.tensor([1.5, 2.0, 2.0])
loss = (pred - target) ** 2
loss.backward()
