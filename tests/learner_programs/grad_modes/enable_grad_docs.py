import torch

x = torch.tensor([1.], requires_grad=True)
with torch.no_grad(), torch.enable_grad():
    y = x * 2
print(y.requires_grad)
y.backward()
print(x.grad)


@torch.enable_grad()
def doubler(x):
    return x * 2


with torch.no_grad():
    z = doubler(x)
print(z.requires_grad)
