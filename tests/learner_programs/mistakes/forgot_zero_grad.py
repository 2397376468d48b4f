import torch

w = torch.tensor([1.0], requires_grad=True)
for step in range(4):
    loss = (w * 3).sum()
    loss.backward()
    print(step, w.grad)  # grows: nobody zeroes it
