import torch
from torch import nn

X = torch.linspace(0, 1, 20).unsqueeze(1)
Y = 3 * X + 0.5 + 0.05 * torch.randn(20, 1)
model = nn.Linear(1, 1)
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(50):
    optimizer.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch}: loss {loss.item():.5f}")
print(model.weight.item(), model.bias.item())
