import torch
from torch import nn


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias):
        ctx.save_for_backward(input, weight, bias)
        return input.mm(weight.t()) + bias

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        return grad_output.mm(weight), grad_output.t().mm(input), grad_output.sum(0)


class Linear(nn.Module):
    def __init__(self, input_features, output_features):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(output_features, input_features))
        self.bias = nn.Parameter(torch.zeros(output_features))
        nn.init.uniform_(self.weight, -0.1, 0.1)
        nn.init.uniform_(self.bias, -0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)


layer = Linear(3, 2)
x = torch.randn(4, 3)
out = layer(x).pow(2).mean()
out.backward()
print(out)
print(layer.weight.grad)
print(layer.bias.grad)
w = layer.weight
