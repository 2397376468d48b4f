import torch
# x：CPU 上的张量
x=torch.randn(1)
# 如果服务器上已经安装了GPU和CUDA
if torch.cuda.is_available():
 # 定义一个设备对象, 这里指定成CUDA, 即使用GPU
 device = torch.device("cuda")
 # 直接在GPU上创建一个Tensor
 y = torch.ones_like(x, device=device)
 # 将在CPU上面的x张量移动到GPU上面
 x = x.to(device)
 # x和y都在GPU上面, 才能支持加法运算
 z = x + y
 # 此处的张量z在GPU上面
 print(z)
 # 也可以将z转移到CPU上面, 并同时指定张量元素的数据类型
 print(z.to("cpu", torch.double))
