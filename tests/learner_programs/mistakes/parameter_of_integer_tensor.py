# An nn.Parameter made from a tensor of integers in a module's __init__
import torch


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.factor = torch.nn.Parameter(torch.tensor([1, 2, 3]))


model = Scale()
