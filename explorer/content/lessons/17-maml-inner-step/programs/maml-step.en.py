import torch

# One task, y = 2 * x: a support set to adapt on, a query set to judge the adapted weight.
x_support = torch.tensor([-1.0, 1.0])
y_support = torch.tensor([-2.0, 2.0])
x_query = torch.tensor([1.0, 3.0])
y_query = torch.tensor([2.0, 6.0])
alpha = 0.1  # the inner step's learning rate

w = torch.tensor(1.0, requires_grad=True)  # the model y = w * x, before it adapts

# MAML: the inner step's gradient keeps its graph (create_graph=True).
inner_loss = ((w * x_support - y_support) ** 2).mean()
g, = torch.autograd.grad(inner_loss, w, create_graph=True)
w_fast = w - alpha * g  # one step of gradient descent on the support set
outer_loss = ((w_fast * x_query - y_query) ** 2).mean()
outer_loss.backward()  # back through w_fast, and through g's graph, to w
maml_grad = w.grad.clone()

# First-order MAML: the same step with g.detach(), its value without its graph.
w.grad = None
w_first = w - alpha * g.detach()
first_loss = ((w_first * x_query - y_query) ** 2).mean()
first_loss.backward()
first_order_grad = w.grad.clone()

print(maml_grad)
print(first_order_grad)
print(maml_grad - first_order_grad)
