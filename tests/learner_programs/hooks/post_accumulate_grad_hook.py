import torch

w = torch.tensor([1.0, -1.0], requires_grad=True)


def report(param):
    print("accumulated into w:", param.grad)


w.register_post_accumulate_grad_hook(report)
(w * torch.tensor([3.0, 4.0])).sum().backward()
(w ** 2).sum().backward()
print(w.grad)
