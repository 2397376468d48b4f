import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: print("tensor hook", g) or g * 2)
x.register_post_accumulate_grad_hook(lambda t: print("after accumulation", t.grad))
(x * 5).sum().backward()
print(x.grad)
