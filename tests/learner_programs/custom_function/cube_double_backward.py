import torch


def fw(x):
    return x ** 3


def bw(grad, x):
    return grad * 3 * x ** 2


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X):
        ctx.save_for_backward(X)
        return fw(X)

    @staticmethod
    def backward(ctx, grad_out):
        X, = ctx.saved_tensors
        return bw(grad_out, X)


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(Cube.apply, x))
print(torch.autograd.gradgradcheck(Cube.apply, x))
y = Cube.apply(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
gg, = torch.autograd.grad(g.sum(), x)
print(torch.allclose(gg, 6 * x))
