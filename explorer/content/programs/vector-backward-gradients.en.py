import torch
x = torch.randn(3, requires_grad=True)
y = x*2
while y.data.norm() < 1000:
    y = y * 2
# Now pass a vector to backward:
gradients = torch.tensor([0.1,1.0,0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)
