from __future__ import print_function
import torch
# 创建一个没有初始化的矩阵
x=torch.empty(5,3)
print(x)
# 创建一个有初始化的矩阵
x=torch.rand(5,3)
print(x)
# 创建一个全零矩阵并可指定数据元素的类型为long
x=torch.zeros(5,3,dtype=torch.long)
# 直接通过数据创建张量
x=torch.tensor([2.5,3.5])
print(x)
# 通过已有的一个张量创建新张量：利用 new_ones 方法指定新的尺寸
x = x.new_ones(5,3,dtype=torch.double)
print(x)
# 利用 randn_like 方法得到相同尺寸的新张量，并且采用随机初始化来对其赋值
y=torch.randn_like(x,dtype=torch.float)
print(y)
# 得到张量的尺寸
print(x.size())
