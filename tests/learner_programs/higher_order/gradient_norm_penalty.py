# After gradient-norm regularisation (double backpropagation, as input-gradient regularisation
# does it): the norm of grad(loss, params, create_graph=True) added to the loss, then backward
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3)
y = torch.randn(8, 1)

for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)
    grad_norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    total = loss + 0.1 * grad_norm
    total.backward()
    optimizer.step()
    print(step, f"{loss.item():.6f}", f"{grad_norm.item():.6f}")

print(model[0].weight.grad)
print(model[2].weight.grad)
