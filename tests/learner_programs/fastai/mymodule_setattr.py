# fast.ai part 2 (2022), 04_minibatch_training "Registering modules": MyModule keeps its layers
# in _modules through __setattr__ and super().__setattr__, and yields their parameters; MNIST
# replaced by 8x8 synthetic digits made inline, one backward pass through mdl's layers added
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

class MyModule:
    def __init__(self, n_in, nh, n_out):
        self._modules = {}
        self.l1 = nn.Linear(n_in,nh)
        self.l2 = nn.Linear(nh,n_out)

    def __setattr__(self,k,v):
        if not k.startswith("_"): self._modules[k] = v
        super().__setattr__(k,v)

    def __repr__(self): return f'{self._modules}'

    def parameters(self):
        for l in self._modules.values(): yield from l.parameters()

mdl = MyModule(m,nh,10)
print(mdl)

for p in mdl.parameters(): print(p.shape)

loss = F.cross_entropy(mdl.l2(F.relu(mdl.l1(x_train[:50]))), y_train[:50])
loss.backward()
print([p.grad.shape for p in mdl.parameters()])
