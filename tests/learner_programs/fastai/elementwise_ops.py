# fast.ai part 2 (2022), 01_matmul: elementwise operations, the Frobenius norm, and matmul with
# its inner loop replaced by an elementwise product and sum, then torch.dot; MNIST replaced by
# 8x8 synthetic digits made inline, fastcore's test_close written inline, %timeit dropped
import torch
from torch import tensor

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

a = tensor([10., 6, -4])
b = tensor([2., 8, 7])
print(a,b)
print(a + b)
print((a < b).float().mean())

m = tensor([[1., 2, 3], [4,5,6], [7,8,9]]); print(m)
print((m*m).sum().sqrt())
print(m[2,:],m[:,2])
print(m[2])

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc): c[i,j] = (a[i,:] * b[:,j]).sum()
    return c

test_close(t1,matmul(m1, m2))

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc): c[i,j] = torch.dot(a[i,:], b[:,j])
    return c

test_close(t1,matmul(m1, m2))
print("ok")
