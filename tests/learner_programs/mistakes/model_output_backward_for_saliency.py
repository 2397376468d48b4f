# A saliency map attempted by calling backward() on the model's whole output
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
image = torch.randn(1, 4, requires_grad=True)
scores = model(image)
scores.backward()
