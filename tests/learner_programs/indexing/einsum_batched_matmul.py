import torch

A = torch.randn(2, 3, 4, requires_grad=True)
B = torch.randn(4, 5, requires_grad=True)
C = torch.einsum("bij,jk->bik", A, B)
D = A @ B  # broadcast over the batch
print(torch.allclose(C, D))
C.sum().backward()
print(B.grad)
print(torch.allclose(B.grad, A.detach().sum((0, 1)).unsqueeze(1).expand(4, 5)))
