import torch
x = torch.ones(3, 3, requires_grad=True)
y = 2*x+1
z = y*y*3
z_mean = z.mean()
## 经过了backward()方法后，torch会计算出x所带有的梯度：
z_mean.backward()
print(x.grad)
