import torch

w = torch.tensor([1.0, -1.0], requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.01)
for step in range(3):
    optimizer.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    optimizer.step()
    print(step, w.detach(), optimizer.state[w]["momentum_buffer"])
