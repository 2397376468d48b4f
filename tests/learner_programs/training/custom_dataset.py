import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.x[i] ** 2


w = torch.tensor(0.0, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.001)
for xb, yb in DataLoader(Squares(8), batch_size=4):
    loss = ((w * xb - yb) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(xb, loss.item())
print(w)
