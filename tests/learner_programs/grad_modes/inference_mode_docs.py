import torch

x = torch.ones(1, 2, 3, requires_grad=True)
with torch.inference_mode():
    y = x * x
print(y.requires_grad)
print(y.is_inference())


@torch.inference_mode()
def func(x):
    return x * x


out = func(x)
print(out.requires_grad, out.is_inference())
print(torch.is_inference_mode_enabled())
