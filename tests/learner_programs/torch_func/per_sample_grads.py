import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
data = torch.randn(6, 4)
targets = torch.randint(3, (6,))
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, targets)


ft_compute_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for name, g in ft_per_sample_grads.items():
    print(name, tuple(g.shape))

# the same, one sample at a time with the classic API
loss = F.cross_entropy(model(data[:1]), targets[:1])
manual = torch.autograd.grad(loss, list(model.parameters()))
pairs = zip(manual, ft_per_sample_grads.values(), strict=True)
print(all(torch.allclose(a, b[0], atol=1e-6) for a, b in pairs))
