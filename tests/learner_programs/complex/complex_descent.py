import torch

target = torch.tensor([1 - 2j, 0.5 + 0.5j])
w = torch.zeros(2, dtype=torch.cfloat, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.2)
for step in range(20):
    loss = (w - target).abs().pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(step, loss.item())
print(w)
