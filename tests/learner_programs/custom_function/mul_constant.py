import torch
from torch.autograd import Function


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        # ctx is a context object that can be used to stash information
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        # Gradient of a non-Tensor argument must be None
        return grad_output * ctx.constant, None


x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = MulConstant.apply(x, 5.5)
y.backward(torch.ones(3))
print(y, x.grad)
