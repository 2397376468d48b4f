import torch

r = torch.tensor([1.0, 2.0], requires_grad=True)
theta = torch.tensor([0.0, 1.5707963], requires_grad=True)
z = torch.polar(r, theta)
print(z)
z.real.sum().backward()
print(r.grad, theta.grad)
