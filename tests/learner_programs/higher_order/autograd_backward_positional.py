import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * a
torch.autograd.backward(b, torch.tensor([0.1, 1.0, 10.0]))
print(a.grad)
c = a.exp()
torch.autograd.backward(tensors=[c], grad_tensors=[torch.ones(3)], inputs=[a])
print(a.grad)
b2 = a * 4
b2.backward(gradient=torch.tensor([1.0, 1.0, 1.0]))
print(a.grad)
