import torch

w = torch.tensor([1.0, -1.0], requires_grad=True)  # a linear model's weights
xs = torch.tensor([[1.0, 1.0], [1.0, 2.0], [2.0, 1.0], [3.0, 1.0]])  # 4 samples
ys = torch.tensor([1.0, 1.0, -1.0, 1.0])  # their targets


def loss_fn(w, x, y):
    error = x @ w - y  # one sample's error, or each sample's of a batch
    return error ** 2


# 1. A Python loop: one torch.autograd.grad per sample, stacked into rows.
grads = []
for x, y in zip(xs, ys, strict=True):
    g, = torch.autograd.grad(loss_fn(w, x, y), w)
    grads.append(g)
loop_grads = torch.stack(grads)

# 2. torch.func: the gradient of one sample's loss, vmapped over the batch.
vmap_grads = torch.func.vmap(torch.func.grad(loss_fn), in_dims=(None, 0, 0))(w, xs, ys)
print(torch.allclose(loop_grads, vmap_grads))

# One backward of the batch's mean loss gives the mean of the per-sample gradients.
batch_loss = loss_fn(w, xs, ys).mean()
batch_loss.backward()
print(torch.allclose(loop_grads.mean(dim=0), w.grad))


def losses(w):
    return loss_fn(w, xs, ys)  # every sample's loss: a vector


# Its Jacobian, in reverse mode and in forward mode, and the mean loss's Hessian.
jac_rev = torch.func.jacrev(losses)(w)
jac_fwd = torch.func.jacfwd(losses)(w)
print(torch.allclose(jac_rev, jac_fwd))
hess = torch.func.hessian(lambda w: losses(w).mean())(w)
print(hess)
