import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer_dict = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}


def optimizer_hook(parameter) -> None:
    optimizer_dict[parameter].step()
    optimizer_dict[parameter].zero_grad()


for p in model.parameters():
    p.register_post_accumulate_grad_hook(optimizer_hook)

data = torch.randn(8, 4)
for _ in range(3):
    loss = model(data).pow(2).mean()
    loss.backward()
    print(loss.item())
print(model.weight.grad, model.bias.grad)
weight = model.weight
