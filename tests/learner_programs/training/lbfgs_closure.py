import torch

w = torch.tensor([0.0, 0.0], requires_grad=True)
target = torch.tensor([1.0, -2.0])
optimizer = torch.optim.LBFGS([w], lr=1)


def closure():
    optimizer.zero_grad()
    loss = ((w - target) ** 2).sum() + (w[0] * w[1]) ** 2
    loss.backward()
    return loss


for i in range(3):
    loss = optimizer.step(closure)
    print(i, loss.item(), w.detach())
