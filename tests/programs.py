"""Programs several test files run: the seed's autograd example, its MyReLU Function, a
`while` loop of 29 rounds (its last known only once it has run), and an RNN whose second
round's backward finds the first round's graph freed."""

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

# `h_prev = h` reads the round before's state first, then `h` is made anew from it.
RNN = """torch.manual_seed(0)
W = torch.randn(3, 2, requires_grad=True)
U = torch.randn(3, 3, requires_grad=True)
xs = torch.randn(5, 2)
h = torch.zeros(3)
for t in range(5):
    h_prev = h
    h = torch.tanh(W @ xs[t] + U @ h_prev)
    loss = (h ** 2).sum()
    loss.backward()
"""
