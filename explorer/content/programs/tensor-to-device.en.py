import torch
# x: a tensor on the CPU
x=torch.randn(1)
# If this machine has a GPU and CUDA
if torch.cuda.is_available():
 # A device object: CUDA, that is the GPU
 device = torch.device("cuda")
 # Create a tensor directly on the GPU
 y = torch.ones_like(x, device=device)
 # Move x from the CPU to the GPU
 x = x.to(device)
 # x and y are both on the GPU, so they can be added
 z = x + y
 # z is on the GPU
 print(z)
 # z can move back to the CPU, changing its dtype on the way
 print(z.to("cpu", torch.double))
