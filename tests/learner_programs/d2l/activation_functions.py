# d2l.ai "Multilayer Perceptrons", activation functions: ReLU, sigmoid and tanh and their
# derivatives by backward with retain_graph and x.grad.data.zero_(); the d2l.plot calls replaced
# by printing a few values
import torch

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.relu(x)
print(y[75:85])

y.backward(torch.ones_like(x), retain_graph=True)
print(x.grad[75:85])

y = torch.sigmoid(x)
print(y[75:85])

# Clear out previous gradients
x.grad.data.zero_()
y.backward(torch.ones_like(x),retain_graph=True)
print(x.grad[75:85])

y = torch.tanh(x)
print(y[75:85])

# Clear out previous gradients.
x.grad.data.zero_()
y.backward(torch.ones_like(x),retain_graph=True)
print(x.grad[75:85])
