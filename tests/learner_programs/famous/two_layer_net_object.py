# A two-layer net written as a class extending object, as in CS231n's and many courses'
# assignments, with its backward pass checked against autograd's
import torch


class TwoLayerNet(object):
    def __init__(self, input_size, hidden_size, output_size, std=1e-1):
        self.params = {}
        self.params['W1'] = std * torch.randn(input_size, hidden_size, dtype=torch.double)
        self.params['b1'] = torch.zeros(hidden_size, dtype=torch.double)
        self.params['W2'] = std * torch.randn(hidden_size, output_size, dtype=torch.double)
        self.params['b2'] = torch.zeros(output_size, dtype=torch.double)

    def loss(self, X, y):
        W1, b1 = self.params['W1'], self.params['b1']
        W2, b2 = self.params['W2'], self.params['b2']
        hidden = torch.clamp(X @ W1 + b1, min=0)
        scores = hidden @ W2 + b2
        shifted = scores - scores.max(dim=1, keepdim=True).values
        probs = shifted.exp() / shifted.exp().sum(dim=1, keepdim=True)
        loss = -probs[torch.arange(X.shape[0]), y].log().mean()
        grads = {}
        dscores = probs.clone()
        dscores[torch.arange(X.shape[0]), y] -= 1
        dscores /= X.shape[0]
        grads['W2'] = hidden.t() @ dscores
        grads['b2'] = dscores.sum(dim=0)
        dhidden = dscores @ W2.t()
        dhidden[hidden <= 0] = 0
        grads['W1'] = X.t() @ dhidden
        grads['b1'] = dhidden.sum(dim=0)
        return loss, grads


torch.manual_seed(0)
net = TwoLayerNet(4, 10, 3)
X = torch.randn(5, 4, dtype=torch.double)
y = torch.tensor([0, 1, 2, 2, 1])
loss, grads = net.loss(X, y)
print(loss)
for name in net.params:
    net.params[name].requires_grad_()
auto_loss, _ = net.loss(X, y)
auto_loss.backward()
for name in sorted(grads):
    print(name, torch.allclose(grads[name], net.params[name].grad))
