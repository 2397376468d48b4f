import torch
x = torch.randn(3, requires_grad=True)
y = x*2
while y.data.norm() < 1000:
    y = y * 2
## 可以发现，作为一个向量，其再做反向传播的时候无法直接计算出完整的雅可比行列式
# RuntimeError: grad can be implicitly created only
# for scalar outputs
y.backward()
