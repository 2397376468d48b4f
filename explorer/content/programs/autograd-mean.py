import torch
# 来自前面的代码 (from the earlier snippets)
x = torch.ones(2,2,requires_grad=True)
y=x+2
z=y*y*3
out=z.mean()
print(z,out)
