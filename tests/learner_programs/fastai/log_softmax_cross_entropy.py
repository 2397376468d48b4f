# fast.ai part 2 (2022), 04_minibatch_training: log_softmax three ways, logsumexp, nll by
# integer array indexing, checked against F.nll_loss and F.cross_entropy, and one backward pass
# added at the end; MNIST replaced by 8x8 synthetic digits made inline, test_close inline
import torch
from torch import nn
import torch.nn.functional as F

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
nh = 50

class Model(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.layers = [nn.Linear(n_in,nh), nn.ReLU(), nn.Linear(nh,n_out)]

    def __call__(self, x):
        for l in self.layers: x = l(x)
        return x

model = Model(m, nh, 10)
pred = model(x_train)
print(pred.shape)

def log_softmax(x): return (x.exp()/(x.exp().sum(-1,keepdim=True))).log()

print(log_softmax(pred)[:2])

def log_softmax(x): return x - x.exp().sum(-1,keepdim=True).log()

def logsumexp(x):
    m = x.max(-1)[0]
    return m + (x-m[:,None]).exp().sum(-1).log()

def log_softmax(x): return x - x.logsumexp(-1,keepdim=True)

test_close(logsumexp(pred), pred.logsumexp(-1))
sm_pred = log_softmax(pred)
print(sm_pred[:2])

print(y_train[:3])
print(sm_pred[0,y_train[0]],sm_pred[1,y_train[1]],sm_pred[2,y_train[2]])
print(sm_pred[[0,1,2], y_train[:3]])

def nll(input, target): return -input[range(target.shape[0]), target].mean()

loss = nll(sm_pred, y_train)
print(loss)

test_close(F.nll_loss(F.log_softmax(pred, -1), y_train), loss, 1e-3)
test_close(F.cross_entropy(pred, y_train), loss, 1e-3)

loss.backward()
print(model.layers[2].bias.grad)
