import torch
x=torch.randn(4,4)
#tensor.view()操作需要保证数据元素的总数量不变
y=x.view(16)
#-1代表自动匹配个数
z=x.view(-1,8)
print(x.size(),y.size(),z.size())
