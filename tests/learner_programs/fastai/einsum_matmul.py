# fast.ai part 2 (2022), 01_matmul: Einstein summation, 'ik,kj->ikj' summed, then 'ik,kj->ij',
# and PyTorch's own x_train@weights and torch.matmul; MNIST replaced by 8x8 synthetic digits
# made inline, fastcore's test_close written inline, %timeit dropped
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

def matmul(a,b):
    (ar,ac),(br,bc) = a.shape,b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        c[i]   = (a[i,:,None] * b).sum(dim=0) # broadcast version
    return c

tr = matmul(x_train, weights)

# c[i,j] += a[i,k] * b[k,j]
# c[i,j] = (a[i,:] * b[:,j]).sum()
mr = torch.einsum('ik,kj->ikj', m1, m2)
print(mr.shape)
print(mr.sum(1))
print(torch.einsum('ik,kj->ij', m1, m2))

def matmul(a,b): return torch.einsum('ik,kj->ij', a, b)

test_close(tr, matmul(x_train, weights), eps=1e-3)

# pytorch op
test_close(tr, x_train@weights, eps=1e-3)
test_close(tr, torch.matmul(x_train, weights), eps=1e-3)
print("ok")
