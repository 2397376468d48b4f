import torch
x = torch.ones(3, 3, requires_grad=True)
y = 2*x+1
z = y*y*3
z_mean = z.mean()
z_mean.backward()
# y 不是叶子张量：它的 .grad 不会保留
print(y.grad)
