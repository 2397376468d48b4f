# fast.ai part 2 (2022), 01_matmul: broadcasting a scalar, a vector against a matrix,
# expand_as and its zero stride, unsqueeze and None indexing, and broadcasting rules; the cells'
# results printed
from torch import tensor

a = tensor([10., 6, -4])
print(a > 0)
print(a + 1)

m = tensor([[1., 2, 3], [4,5,6], [7,8,9]])
print(2*m)

c = tensor([10.,20,30]); print(c)
print(m.shape,c.shape)
print(m + c)
print(c + m)

t = c.expand_as(m)
print(t)
print(m + t)
print(t.storage())
print(t.stride(), t.shape)

print(c.unsqueeze(0), c[None, :])
print(c.shape, c.unsqueeze(0).shape)
print(c.unsqueeze(1), c[:, None])
print(c.shape, c.unsqueeze(1).shape)
print(c[None].shape,c[...,None].shape)
print(c[:,None].expand_as(m))
print(m + c[:,None])
print(m + c[None,:])

# Broadcasting Rules
print(c[None,:])
print(c[None,:].shape)
print(c[:,None])
print(c[:,None].shape)
print(c[None,:] * c[:,None])
print(c[None] > c[:,None])
print(m*m)
