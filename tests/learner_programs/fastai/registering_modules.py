# fast.ai part 2 (2022), 04_minibatch_training "Registering modules": layers kept in a list and
# registered with add_module, forward by functools.reduce, then fit(); MNIST replaced by 8x8
# synthetic digits made inline (500 for 50000); MyModule is in mymodule_setattr.py and
# nn.ModuleList and nn.Sequential in modulelist_sequential.py
import torch
from torch import nn
import torch.nn.functional as F

# MNIST made inline: 8x8 "digits" (64 pixels rather than 784), each its class's pattern with noise
patterns = torch.rand(10, 64)
y_train, y_valid = torch.randint(0, 10, (500,)), torch.randint(0, 10, (100,))
x_train = (patterns[y_train] + 0.3 * torch.rand(500, 64)).clamp(0, 1)
x_valid = (patterns[y_valid] + 0.3 * torch.rand(100, 64)).clamp(0, 1)

# fastcore's test_close and test_eq, written inline for tensors
def test_close(a, b, eps=1e-5):
    "`test` that `a` is within `eps` of `b`"
    assert (abs(a - b) < eps).all(), f"close:\n{a}\n{b}"

def test_eq(a, b):
    "`test` that `a==b`"
    assert (a == b).all(), f"==:\n{a}\n{b}"

n,m = x_train.shape
c = y_train.max()+1
nh = 50

loss_func = F.cross_entropy
bs=50                  # batch size
def accuracy(out, yb): return (out.argmax(dim=1)==yb).float().mean()
lr = 0.5   # learning rate
epochs = 3 # how many epochs to train for
def report(loss, preds, yb): print(f'{loss:.2f}, {accuracy(preds, yb):.2f}')

def fit():
    for epoch in range(epochs):
        for i in range(0, n, bs):
            s = slice(i, min(n,i+bs))
            xb,yb = x_train[s],y_train[s]
            preds = model(xb)
            loss = loss_func(preds, yb)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters(): p -= p.grad * lr
                model.zero_grad()
        report(loss, preds, yb)

from functools import reduce

layers = [nn.Linear(m,nh), nn.ReLU(), nn.Linear(nh,10)]

class Model(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers
        for i,l in enumerate(self.layers): self.add_module(f'layer_{i}', l)

    def forward(self, x): return reduce(lambda val,layer: layer(val), self.layers, x)

model = Model(layers)
print(model)

xb,yb = x_train[:bs],y_train[:bs]
print(model(xb).shape)

fit()
print(loss_func(model(xb), yb), accuracy(model(xb), yb))
