# fast.ai part 2 (2022), 03_backprop "Autograd": the same model as an nn.Module whose Linear
# keeps requires_grad_() tensors, the loss F.mse_loss, and loss.backward() doing the work;
# MNIST replaced by 8x8 synthetic digits made inline
import torch
from torch import nn
import torch.nn.functional as F

# MNIST made inline: 8x8 "digits" (64 pixels rather than 784), each its class's pattern with noise
patterns = torch.rand(10, 64)
y_train, y_valid = torch.randint(0, 10, (500,)), torch.randint(0, 10, (100,))
x_train = (patterns[y_train] + 0.3 * torch.rand(500, 64)).clamp(0, 1)
x_valid = (patterns[y_valid] + 0.3 * torch.rand(100, 64)).clamp(0, 1)

n,m = x_train.shape
nh = 50
y_train,y_valid = y_train.float(),y_valid.float()

class Linear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = torch.randn(n_in,n_out).requires_grad_()
        self.b = torch.zeros(n_out).requires_grad_()
    def forward(self, inp): return inp@self.w + self.b

class Model(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.layers = [Linear(n_in,nh), nn.ReLU(), Linear(nh,n_out)]

    def __call__(self, x, targ):
        for l in self.layers: x = l(x)
        return F.mse_loss(x, targ[:,None])

model = Model(m, nh, 1)
loss = model(x_train, y_train)
loss.backward()

l0 = model.layers[0]
print(l0.b.grad)
print(list(model.parameters()))  # added: [] as w and b are plain tensors
