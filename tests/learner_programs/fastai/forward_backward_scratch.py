# fast.ai part 2 (2022), 03_backprop: the forward pass (lin, relu, model, mse), the backward pass
# by hand storing gradients in .g (lin_grad, forward_and_backward), checked against autograd;
# MNIST replaced by 8x8 synthetic digits made inline, fastcore's test_close written inline, the
# sympy cell dropped
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

n,m = x_train.shape
c = y_train.max()+1
print(n,m,c)

# num hidden
nh = 50

w1 = torch.randn(m,nh)
b1 = torch.zeros(nh)
w2 = torch.randn(nh,1)
b2 = torch.zeros(1)

def lin(x, w, b): return x@w + b

t = lin(x_valid, w1, b1)
print(t.shape)

def relu(x): return x.clamp_min(0.)

t = relu(t)
print(t[:2])

def model(xb):
    l1 = lin(xb, w1, b1)
    l2 = relu(l1)
    return lin(l2, w2, b2)

res = model(x_valid)
print(res.shape)

print(res.shape,y_valid.shape)
print((res-y_valid).shape)
print(res[:,0].shape)
print(res.squeeze().shape)
print((res[:,0]-y_valid).shape)

y_train,y_valid = y_train.float(),y_valid.float()

preds = model(x_train)
print(preds.shape)

def mse(output, targ): return (output[:,0]-targ).pow(2).mean()

print(mse(preds, y_train))

def lin_grad(inp, out, w, b):
    # grad of matmul with respect to input
    inp.g = out.g @ w.t()
    w.g = (inp.unsqueeze(-1) * out.g.unsqueeze(1)).sum(0)
    b.g = out.g.sum(0)

def forward_and_backward(inp, targ):
    # forward pass:
    l1 = lin(inp, w1, b1)
    l2 = relu(l1)
    out = lin(l2, w2, b2)
    diff = out[:,0]-targ
    loss = diff.pow(2).mean()

    # backward pass:
    out.g = 2.*diff[:,None] / inp.shape[0]
    lin_grad(l2, out, w2, b2)
    l1.g = (l1>0).float() * l2.g
    lin_grad(inp, l1, w1, b1)

forward_and_backward(x_train, y_train)

# Save for testing against later
def get_grad(x): return x.g.clone()
chks = w1,w2,b1,b2,x_train
grads = w1g,w2g,b1g,b2g,ig = tuple(map(get_grad, chks))

# We cheat a little bit and use PyTorch autograd to check our results.

def mkgrad(x): return x.clone().requires_grad_(True)
ptgrads = w12,w22,b12,b22,xt2 = tuple(map(mkgrad, chks))

def forward(inp, targ):
    l1 = lin(inp, w12, b12)
    l2 = relu(l1)
    out = lin(l2, w22, b22)
    return mse(out, targ)

loss = forward(xt2, y_train)
loss.backward()

for a,b in zip(grads, ptgrads): test_close(a, b.grad, eps=0.01)
print(loss, w22.grad[:3, 0])
