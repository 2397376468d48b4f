import torch
from torch.autograd import Function


class Func(Function):
    @staticmethod
    def forward(ctx, x):
        sorted, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted, idx

    @staticmethod
    def backward(ctx, g1, g2):  # still need to accept g2
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g1)
        return grad_input


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
values, indices = Func.apply(x)
print(values, indices, indices.requires_grad)
(values * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(x.grad)
