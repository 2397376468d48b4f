import torch
x = torch.ones(3, 3, requires_grad=True)
y = 2*x+1
z = y*y*3
z_mean = z.mean()
z_mean.backward()
# y is not a leaf: its .grad is not kept
print(y.grad)
