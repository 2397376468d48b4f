from __future__ import print_function
import torch
# x：和上一课一样，一个 5x3 的全一张量
x=torch.tensor([2.5,3.5])
x = x.new_ones(5,3,dtype=torch.double)
y = torch.rand(5,3)
print(x+y)
# 第二种方式
print(torch.add(x,y))
# 第三种方式：
# 提前设定一个空的张量
result = torch.empty(5,3)
# 将空的张量作为加法的结果存储张量
torch.add(x,y,out=result)
print(result)
# 第四种方式 in-place（原地操作）：y 本身被改变
y.add_(x)
print(y)
