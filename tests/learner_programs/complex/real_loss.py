import torch

z = torch.tensor([1 + 2j, -1 + 0.5j], requires_grad=True)
loss = (z * z.conj()).real.sum()
loss.backward()
print(loss, z.grad)  # 2z
