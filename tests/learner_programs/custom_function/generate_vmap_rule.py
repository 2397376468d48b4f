import torch


class MyExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


x = torch.randn(3)
print(torch.func.grad(lambda t: MyExp.apply(t).sum())(x))
print(torch.func.vmap(MyExp.apply)(torch.randn(2, 3)))
print(torch.func.jacrev(MyExp.apply)(torch.tensor([0.0, 1.0])))
