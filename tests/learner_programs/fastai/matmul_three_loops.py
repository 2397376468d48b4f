# fast.ai part 2 (2022), 01_matmul: matrix multiplication with three nested loops, then as a
# function; MNIST replaced by 8x8 synthetic digits made inline (weights 64x10 for 784x10), the
# %time cells dropped
import torch

# MNIST made inline: 8x8 "digits" (64 pixels rather than 784), each its class's pattern with noise
patterns = torch.rand(10, 64)
y_train, y_valid = torch.randint(0, 10, (500,)), torch.randint(0, 10, (100,))
x_train = (patterns[y_train] + 0.3 * torch.rand(500, 64)).clamp(0, 1)
x_valid = (patterns[y_valid] + 0.3 * torch.rand(100, 64)).clamp(0, 1)

torch.manual_seed(1)
weights = torch.randn(64,10)
bias = torch.zeros(10)

m1 = x_valid[:5]
m2 = weights
print(m1.shape,m2.shape)

ar,ac = m1.shape # n_rows * n_cols
br,bc = m2.shape
print((ar,ac),(br,bc))

t1 = torch.zeros(ar, bc)
print(t1.shape)

for i in range(ar):         # 5
    for j in range(bc):     # 10
        for k in range(ac): # 64
            t1[i,j] += m1[i,k] * m2[k,j]

print(t1)
print(t1.shape)

import numpy as np
np.set_printoptions(precision=2, linewidth=140)
torch.set_printoptions(precision=2, linewidth=140, sci_mode=False)
print(t1)

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc):
            for k in range(ac): c[i,j] += a[i,k] * b[k,j]
    return c

_=matmul(m1, m2)
print(ar*bc*ac)
print(torch.equal(_, t1))
