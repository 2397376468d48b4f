import torch
from torch import nn

emb = nn.Embedding(10, 3, sparse=True)
optimizer = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
loss = emb(idx).sum()
loss.backward()
print(emb.weight.grad.is_sparse)
print(emb.weight.grad.coalesce().indices())
optimizer.step()
print(emb.weight[4])
