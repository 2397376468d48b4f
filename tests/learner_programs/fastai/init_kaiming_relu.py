# fast.ai part 2 (2019), 02_fully_connected: normalising the inputs, the simplified Kaiming init
# 1/sqrt(m), then sqrt(2/m) for ReLU, init.kaiming_normal_ with mode='fan_out', and the shifted
# relu; MNIST replaced by 8x8 synthetic digits made inline, test_near_zero written inline, the
# ?? source cells dropped
import math
import torch
from torch.nn import init

# MNIST made inline: 8x8 "digits" (64 pixels rather than 784), each its class's pattern with noise
patterns = torch.rand(10, 64)
y_train, y_valid = torch.randint(0, 10, (500,)), torch.randint(0, 10, (100,))
x_train = (patterns[y_train] + 0.3 * torch.rand(500, 64)).clamp(0, 1)
x_valid = (patterns[y_valid] + 0.3 * torch.rand(100, 64)).clamp(0, 1)

def test_near_zero(a,tol=1e-3): assert a.abs()<tol, f"Near zero: {a}"

def normalize(x, m, s): return (x-m)/s

train_mean,train_std = x_train.mean(),x_train.std()
print(train_mean,train_std)

x_train = normalize(x_train, train_mean, train_std)
# NB: Use training, not validation mean for validation set
x_valid = normalize(x_valid, train_mean, train_std)

train_mean,train_std = x_train.mean(),x_train.std()
print(train_mean,train_std)

test_near_zero(x_train.mean())
test_near_zero(1-x_train.std())

n,m = x_train.shape
c = y_train.max()+1
print(n,m,c)

# num hidden
nh = 50

# simplified kaiming init / he init
w1 = torch.randn(m,nh)/math.sqrt(m)
b1 = torch.zeros(nh)
w2 = torch.randn(nh,1)/math.sqrt(nh)
b2 = torch.zeros(1)

test_near_zero(w1.mean(), 0.05)
test_near_zero(w1.std()-1/math.sqrt(m), 0.05)

# This should be ~ (0,1) (mean,std)...
print(x_valid.mean(),x_valid.std())

def lin(x, w, b): return x@w + b

t = lin(x_valid, w1, b1)

#...so should this, because we used kaiming init, which is designed to do this
print(t.mean(),t.std())

def relu(x): return x.clamp_min(0.)

t = relu(lin(x_valid, w1, b1))

#...actually it really should be this!
print(t.mean(),t.std())

# kaiming init / he init for relu
w1 = torch.randn(m,nh)*math.sqrt(2/m)

print(w1.mean(),w1.std())

t = relu(lin(x_valid, w1, b1))
print(t.mean(),t.std())

w1 = torch.zeros(m,nh)
init.kaiming_normal_(w1, mode='fan_out')
t = relu(lin(x_valid, w1, b1))

print(w1.mean(),w1.std())
print(t.mean(),t.std())
print(w1.shape)

import torch.nn
print(torch.nn.Linear(m,nh).weight.shape)

# what if...?
def relu(x): return x.clamp_min(0.) - 0.5

# kaiming init / he init for relu
w1 = torch.randn(m,nh)*math.sqrt(2./m )
t1 = relu(lin(x_valid, w1, b1))
print(t1.mean(),t1.std())

def model(xb):
    l1 = lin(xb, w1, b1)
    l2 = relu(l1)
    l3 = lin(l2, w2, b2)
    return l3

print(model(x_valid).shape)
