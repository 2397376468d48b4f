# fast.ai part 2 (2022), 01_matmul: matmul with broadcasting, one row of a times all of b summed
# over dim 0, then the whole training set; MNIST replaced by 8x8 synthetic digits made inline,
# fastcore's test_close written inline, %timeit dropped
import torch

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

torch.manual_seed(1)
weights = torch.randn(64,10)
m1 = x_valid[:5]
m2 = weights
t1 = m1 @ m2  # the three-loop result of the cell before

digit = m1[0]
print(digit.shape,m2.shape)
print(digit[:,None].shape)
print(digit[:,None].expand_as(m2).shape)
print((digit[:,None]*m2).shape)

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
#       c[i,j] = (a[i,:] * b[:,j]).sum()      # previous version
        c[i]   = (a[i,:,None] * b).sum(dim=0) # broadcast version
    return c

test_close(t1,matmul(m1, m2))

tr = matmul(x_train, weights)
print(tr)
print(tr.shape)
