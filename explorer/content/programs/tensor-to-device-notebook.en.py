import torch
# The .to method chooses the device a tensor is on (cpu, cuda)
x = torch.empty(3,3)
if torch.cuda.is_available():
    device = torch.device("cuda")
    y = torch.ones_like(x, device=device)
    x = x.to(device)
    z = x + y
    print(z)
    a=z.to("cpu",torch.double)
    print(a)
