import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
loss = (a * b).sum()
loss.backward(inputs=[a])
print(a.grad, b.grad)
