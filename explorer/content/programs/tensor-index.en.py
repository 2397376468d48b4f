import torch
# x: a 5x3 tensor of ones
x=torch.tensor([2.5,3.5])
x = x.new_ones(5,3,dtype=torch.double)
print(x[:,1])
