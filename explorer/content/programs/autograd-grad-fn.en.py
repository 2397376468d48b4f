import torch
# x tracks its history; y is computed from it
x = torch.ones(2,2,requires_grad=True)
y=x+2
print(x.grad_fn)
print(y.grad_fn)
