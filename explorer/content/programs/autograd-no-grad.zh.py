import torch
x = torch.ones(2,2,requires_grad=True)
print(x.requires_grad)
print((x ** 2).requires_grad)
# 在 no_grad 中什么都不记录
with torch.no_grad():
 print((x ** 2).requires_grad)
