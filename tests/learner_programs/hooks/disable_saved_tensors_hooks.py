import torch

x = torch.ones(2, requires_grad=True)
with torch.autograd.graph.disable_saved_tensors_hooks("saved tensor hooks are off in this block"):
    y = x * x
    print(y)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = y * x
