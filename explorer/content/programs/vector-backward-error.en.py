import torch
x = torch.randn(3, requires_grad=True)
y = x*2
while y.data.norm() < 1000:
    y = y * 2
## y is a vector: backward() cannot tell which gradient to start from
# RuntimeError: grad can be implicitly created only
# for scalar outputs
y.backward()
