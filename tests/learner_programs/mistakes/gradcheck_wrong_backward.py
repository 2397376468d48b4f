import torch


class BadSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x  # forgot the factor 2


x = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)
torch.autograd.gradcheck(BadSquare.apply, (x,))
