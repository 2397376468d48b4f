import torch
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad) #False
a.requires_grad_(True)
print(a.requires_grad) #True
b = (a * a).sum()
print(b.requires_grad) #True
b.requires_grad_(False) # 这里报运行时错误
