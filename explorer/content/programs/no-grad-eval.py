import torch
# x 在本笔记中没有定义，取自笔记 001 (x is not defined in this note; from note 001)
x = torch.ones(2, 2, requires_grad=True)
print(x.requires_grad) # True
print((x ** 2).requires_grad) # True
with torch.no_grad():
    print((x ** 2).requires_grad) # False
