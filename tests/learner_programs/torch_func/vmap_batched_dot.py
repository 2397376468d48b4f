import torch
from torch.func import vmap

batched_dot = vmap(torch.dot)  # [N, D], [N, D] -> [N]
x, y = torch.randn(2, 5), torch.randn(2, 5)
print(batched_dot(x, y))
print(torch.allclose(batched_dot(x, y), (x * y).sum(-1)))

weights = torch.randn(4)


def model(feature_vec):
    return feature_vec.dot(weights).relu()


examples = torch.randn(3, 4)
print(vmap(model)(examples))
