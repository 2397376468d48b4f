# Embeddings normalised to unit length in place with /= before the loss
import torch

torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
emb = torch.randn(2, 3) @ w
emb /= emb.norm(dim=1, keepdim=True)
loss = (emb[0] * emb[1]).sum()
loss.backward()
