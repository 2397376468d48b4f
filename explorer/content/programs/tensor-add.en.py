from __future__ import print_function
import torch
# x: a 5x3 tensor of ones, as in the lesson before
x=torch.tensor([2.5,3.5])
x = x.new_ones(5,3,dtype=torch.double)
y = torch.rand(5,3)
print(x+y)
# The second way
print(torch.add(x,y))
# The third way:
# an empty tensor made beforehand
result = torch.empty(5,3)
# receives the sum
torch.add(x,y,out=result)
print(result)
# The fourth way, in place: y itself changes
y.add_(x)
print(y)
