import torch
x = torch.ones(3, 3, requires_grad=True)
y = 2*x+1
z = y*y*3
z_mean = z.mean()
## After backward(), torch has computed the gradient x holds:
z_mean.backward()
print(x.grad)
