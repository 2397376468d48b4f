import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output  # built from differentiable ops: twice differentiable


x = torch.tensor([1.0, 3.0], requires_grad=True)
y = Square.apply(x).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g, g.grad_fn is not None)
g.sum().backward()
print(x.grad)
