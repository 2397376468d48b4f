import random

import numpy as np
import torch

x = torch.randn(4, requires_grad=True)
noise = torch.rand(4)
loss = (x.exp() * noise).sum()
loss.backward()
print(x.grad)
print(torch.rand(2), np.random.rand(2), random.random())
print(torch.randint(0, 100, (3,)), torch.get_rng_state()[:8])
