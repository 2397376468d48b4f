import torch
from torch import nn

X = torch.randn(64, 2)
y = (X[:, 0] * X[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(30):
    logits = model(X)
    loss = loss_fn(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        accuracy = (logits.argmax(1) == y).float().mean()
        print(f"epoch {epoch + 1}: loss={loss.item():.4f} accuracy={accuracy.item():.3f}")
