import torch
from torch.autograd import Function


class MulTwoInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2


a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a.clone()
c = MulTwoInplace.apply(b)
print(c is b, b._version, b.grad_fn)
c.sum().backward()
print(b, a.grad)
