# A loss built with reduction='none' to weight samples, backpropagated without a reduction
import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
x, y = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
criterion = torch.nn.CrossEntropyLoss(reduction='none')
loss = criterion(model(x), y) * torch.tensor([1.0, 2.0, 1.0, 0.5])
loss.backward()
