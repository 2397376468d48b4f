import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

X = torch.randn(20, 3)
Y = X.sum(1, keepdim=True)
loader = DataLoader(TensorDataset(X, Y), batch_size=5, shuffle=True)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(epoch, round(total, 5))
print(model.weight)
