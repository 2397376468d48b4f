import torch

# A tensor: an array of numbers, like NumPy's
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
# Ordinary arithmetic; autograd records how y was made
y = (x * x).sum()
print(y)
# Ask for the gradient: dy/dx = 2x
y.backward()
print(x.grad)
# The same numbers as a NumPy array
print(x.detach().numpy())
# Where the tensor lives: cpu here, cuda on a GPU
print(x.device)
