# Features computed once before the training loop, then backpropagated through every epoch
import torch

torch.manual_seed(0)
x = torch.randn(4, 3)
w = torch.randn(3, 2, requires_grad=True)
features = torch.tanh(x @ w)
opt = torch.optim.SGD([w], lr=0.1)
for epoch in range(3):
    opt.zero_grad()
    loss = features.pow(2).mean()
    print(epoch, loss.item())
    loss.backward()
    opt.step()
