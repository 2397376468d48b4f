import torch

x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()

print(out.grad_fn.name())
node = out.grad_fn
while node is not None:
    print(type(node).__name__)
    parents = [f for f, _ in node.next_functions if f is not None]
    node = parents[0] if parents else None
