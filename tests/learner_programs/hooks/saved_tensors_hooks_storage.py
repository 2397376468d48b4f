import torch

storage = []


def pack(x):
    storage.append(x.clone())
    print("packed", len(storage) - 1)
    return len(storage) - 1


def unpack(i):
    print("unpacked", i)
    return storage[i]


x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x.pow(2).exp()
y.sum().backward()
print(x.grad, len(storage))
