import torch
# x：5x3 的全一张量
x=torch.tensor([2.5,3.5])
x = x.new_ones(5,3,dtype=torch.double)
print(x[:,1])
