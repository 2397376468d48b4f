import torch
x=torch.randn(4,4)
# view() keeps the number of elements the same
y=x.view(16)
# -1: worked out from the other sizes
z=x.view(-1,8)
print(x.size(),y.size(),z.size())
