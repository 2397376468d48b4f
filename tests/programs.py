"""Programs several test files run: the seed's autograd example, its MyReLU Function, and a
`while` loop of 29 rounds (its last known only once it has run)."""

SEED = ("x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y * y * 3\nout = z.mean()\n"
        "out.backward()\n")

MY_RELU = """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input
"""

WHILE = """import torch
w = torch.tensor(1.5, requires_grad=True)
x = torch.tensor(1.0)
while x < 1e5:
    x = x * w
    y = x + 1
print(x.item())
"""
