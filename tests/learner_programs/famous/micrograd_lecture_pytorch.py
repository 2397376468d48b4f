# micrograd lecture (Karpathy): the same neuron in PyTorch, scalar tensors made double with
# requires_grad = True, torch.tanh, o.backward() and the .grad.item() of each input; the cells'
# results printed
import torch

x1 = torch.Tensor([2.0]).double()                ; x1.requires_grad = True
x2 = torch.Tensor([0.0]).double()                ; x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double()               ; w1.requires_grad = True
w2 = torch.Tensor([1.0]).double()                ; w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double()  ; b.requires_grad = True
n = x1*w1 + x2*w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())

print(torch.Tensor([[1,2,3],[4,5,6]]))
print(torch.Tensor([[1,2,3],[4,5,6]]).shape)
print(torch.Tensor([2.0]).dtype)
print(torch.Tensor([2.0]).double().dtype)
print(o.item())
