import torch
# 来自上一段代码 (from the previous snippet)
x = torch.ones(2,2,requires_grad=True)
y=x+2
print(y)
