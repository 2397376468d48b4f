import torch
a = torch.ones(5)
print(a)
#将torch tensor转换成numpy array
b = a.numpy()
print(b)
#对其中一个进行加法操作，另一个也随之被改变
a.add_(1)
print(a)
print(b)
