import torch
from torch import nn

layer = nn.Linear(2, 2)


def backward_hook(module, grad_input, grad_output):
    print("grad_output", grad_output)
    print("grad_input", grad_input)


def backward_pre_hook(module, grad_output):
    print("pre hook sees", grad_output)
    return (grad_output[0] * 0.5,)


layer.register_full_backward_pre_hook(backward_pre_hook)
layer.register_full_backward_hook(backward_hook)
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
layer(x).sum().backward()
print(x.grad)
print(layer.weight.grad)
