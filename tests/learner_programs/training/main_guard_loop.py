import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

step = 0


def train_step(model, optimizer, batch):
    global step
    x, y = batch
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    step += 1
    return loss.item()


def main():
    model = nn.Linear(2, 1)
    print(hasattr(model, "weight"), "bias" in dir(model))
    loader = DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)), batch_size=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    first = next(iter(loader))
    print(first[0].shape)
    for epoch in range(2):
        for batch in loader:
            print(epoch, step, round(train_step(model, optimizer, batch), 6))


if __name__ == "__main__":
    main()
