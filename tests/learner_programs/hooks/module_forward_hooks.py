import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
activations = {}


def save(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
    return hook


model[1].register_forward_hook(save("relu"))
model[0].register_forward_pre_hook(lambda m, inputs: print("input shape", inputs[0].shape))
out = model(torch.randn(2, 3))
print(out)
print(activations["relu"])
relu_out = activations["relu"]
