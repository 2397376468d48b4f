# d2l.ai 2.1 "Data Manipulation": broadcasting, and saving memory with Z[:] = X + Y and X += Y;
# the cells' results printed, print('id(Z):', id(Z)) turned into comparisons of id() before and
# after, since an object's id differs from run to run (and `before` deleted at the end)
import torch

a = torch.arange(3).reshape((3, 1))
b = torch.arange(2).reshape((1, 2))
print(a, b)
print(a + b)

X = torch.arange(12, dtype=torch.float32).reshape((3,4))
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])

before = id(Y)
Y = Y + X
print(id(Y) == before)

Z = torch.zeros_like(Y)
before = id(Z)
Z[:] = X + Y
print(id(Z) == before)

before = id(X)
X += Y
print(id(X) == before)

del before
