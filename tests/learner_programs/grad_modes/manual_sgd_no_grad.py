import torch

w = torch.tensor([0.0, 0.0], requires_grad=True)
x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
t = torch.tensor([5.0, 11.0, 17.0])
for step in range(20):
    loss = ((x @ w - t) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
    w.grad.zero_()
    if step % 5 == 0:
        print(step, loss.item())
print(w)
