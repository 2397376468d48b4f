import torch
import torch.autograd.forward_ad as fwAD


class MyMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_out):
        x, y = ctx.saved_tensors
        return grad_out * y, grad_out * x

    @staticmethod
    def jvp(ctx, x_t, y_t):
        x, y = ctx.saved_tensors
        return x_t * y + x * y_t


x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0, 4.0], requires_grad=True)
with fwAD.dual_level():
    out = MyMul.apply(fwAD.make_dual(x, torch.ones(2)), fwAD.make_dual(y, torch.zeros(2)))
    print(fwAD.unpack_dual(out).tangent)
MyMul.apply(x, y).sum().backward()
print(x.grad, y.grad)
