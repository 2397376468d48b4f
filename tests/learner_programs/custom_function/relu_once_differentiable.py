import torch
from torch.autograd.function import once_differentiable


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
y = MyReLU.apply(x)
(y * torch.arange(4.0)).sum().backward()
print(y, x.grad)
