from __future__ import print_function
import torch
# A matrix that is not initialised: its values are whatever was in memory
x=torch.empty(5,3)
print(x)
# A matrix of random numbers
x=torch.rand(5,3)
print(x)
# A matrix of zeros whose elements are long integers
x=torch.zeros(5,3,dtype=torch.long)
# A tensor made directly from data
x=torch.tensor([2.5,3.5])
print(x)
# A new tensor from an existing one with new_ones: the shape is given, the device is kept
x = x.new_ones(5,3,dtype=torch.double)
print(x)
# randn_like: random numbers in a tensor of the same size as x
y=torch.randn_like(x,dtype=torch.float)
print(y)
# The tensor's size
print(x.size())
