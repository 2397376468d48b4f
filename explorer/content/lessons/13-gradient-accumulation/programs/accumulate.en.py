import torch

# Four mini-batches of two samples each, drawn from y = 2 * x.
xs = torch.tensor([[1.0, 2.0], [3.0, 4.0], [1.0, 3.0], [2.0, 2.0]])
ys = 2 * xs

w = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.01)
accum_steps = 2  # mini-batches whose gradients add up before one step

for i in range(4):
    x, y = xs[i], ys[i]
    loss = ((w * x - y) ** 2).mean()
    # Divide by accum_steps: the gradients of the k batches add up to their mean.
    (loss / accum_steps).backward()  # adds to w.grad, never replaces it
    if (i + 1) % accum_steps == 0:
        optimizer.step()  # one update with the gradient of both batches
        optimizer.zero_grad()  # w.grad back to None for the next batches

print(w)
