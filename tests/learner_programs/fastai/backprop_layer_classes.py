# fast.ai part 2 (2022), 03_backprop "Refactor model": the layers as classes Relu, Lin and Mse
# with __call__ and backward, and a Model that calls them in reverse, checked against autograd;
# MNIST replaced by 8x8 synthetic digits made inline, fastcore's test_close written inline
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
def relu(x): return x.clamp_min(0.)
def mse(output, targ): return (output[:,0]-targ).pow(2).mean()

y_train,y_valid = y_train.float(),y_valid.float()

# the gradients from autograd, to test against (from the cells before)
def mkgrad(x): return x.clone().requires_grad_(True)
w12,w22,b12,b22,xt2 = tuple(map(mkgrad, (w1,w2,b1,b2,x_train)))
mse(lin(relu(lin(xt2, w12, b12)), w22, b22), y_train).backward()

class Relu():
    def __call__(self, inp):
        self.inp = inp
        self.out = inp.clamp_min(0.)
        return self.out

    def backward(self): self.inp.g = (self.inp>0).float() * self.out.g

class Lin():
    def __init__(self, w, b): self.w,self.b = w,b

    def __call__(self, inp):
        self.inp = inp
        self.out = lin(inp, self.w, self.b)
        return self.out

    def backward(self):
        self.inp.g = self.out.g @ self.w.t()
        self.w.g = self.inp.t() @ self.out.g
        self.b.g = self.out.g.sum(0)

class Mse():
    def __call__(self, inp, targ):
        self.inp,self.targ = inp,targ
        self.out = mse(inp, targ)
        return self.out

    def backward(self):
        self.inp.g = 2. * (self.inp.squeeze()-self.targ).unsqueeze(-1) / self.targ.shape[0]

class Model():
    def __init__(self, w1, b1, w2, b2):
        self.layers = [Lin(w1,b1), Relu(), Lin(w2,b2)]
        self.loss = Mse()

    def __call__(self, x, targ):
        for l in self.layers: x = l(x)
        return self.loss(x, targ)

    def backward(self):
        self.loss.backward()
        for l in reversed(self.layers): l.backward()

model = Model(w1, b1, w2, b2)

loss = model(x_train, y_train)

model.backward()

test_close(w22.grad, w2.g, eps=0.01)
test_close(b22.grad, b2.g, eps=0.01)
test_close(w12.grad, w1.g, eps=0.01)
test_close(b12.grad, b1.g, eps=0.01)
test_close(xt2.grad, x_train.g, eps=0.01)
print(loss, w2.g[:3, 0])
