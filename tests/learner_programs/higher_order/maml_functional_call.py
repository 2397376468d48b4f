# After MAML written with torch.func.functional_call: one inner step on nn.Linear's parameters
# with create_graph=True, then the query loss's gradient back to the original parameters
import torch
from torch import nn
from torch.func import functional_call

torch.manual_seed(0)
model = nn.Linear(3, 1)
meta_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x_support, y_support = torch.randn(5, 3), torch.randn(5, 1)
x_query, y_query = torch.randn(5, 3), torch.randn(5, 1)
inner_lr = 0.05

params = dict(model.named_parameters())
support_loss = nn.functional.mse_loss(functional_call(model, params, (x_support,)), y_support)
grads = torch.autograd.grad(support_loss, list(params.values()), create_graph=True)
fast = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads, strict=True)}
query_loss = nn.functional.mse_loss(functional_call(model, fast, (x_query,)), y_query)

meta_optimizer.zero_grad()
query_loss.backward()
print(f"{support_loss.item():.6f} {query_loss.item():.6f}")
print(model.weight.grad)
print(model.bias.grad)
meta_optimizer.step()
print(model.weight)
