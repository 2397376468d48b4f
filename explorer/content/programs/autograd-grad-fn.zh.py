import torch
# x 追踪计算历史；y 由它计算得到
x = torch.ones(2,2,requires_grad=True)
y=x+2
print(x.grad_fn)
print(y.grad_fn)
