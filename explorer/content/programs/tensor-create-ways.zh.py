import torch
# 第一种：torch 的函数
gemfield = torch.empty(7, 19)
gemfield = torch.rand(7, 19)
gemfield = torch.zeros(7, 19, dtype=torch.long)
gemfield = torch.tensor([7.0, 19])

# 第二种：Tensor 类本身
gemfield = torch.Tensor([1,2])
