# After PyTorch's double-backward tutorial for custom autograd Functions: a backward written with
# differentiable ops on the saved input (no .detach()), so gradgradcheck passes
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * x ** 2


x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = Cube.apply(x).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
(h,) = torch.autograd.grad(g.sum(), x)
print(g)  # 3x^2
print(h)  # 6x

inputs = torch.tensor([0.3, -0.7, 1.1], dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Cube.apply, (inputs,)))
print(torch.autograd.gradgradcheck(Cube.apply, (inputs,)))
