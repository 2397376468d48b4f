# torch.where(x > 0, x.sqrt(), 0) to skip negatives: the untaken branch still gives nan gradients
import torch

x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
y = torch.where(x > 0, x.sqrt(), 0.0)
print(y)
y.sum().backward()
print(x.grad)
