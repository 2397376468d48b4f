import torch
# The first way: torch functions
gemfield = torch.empty(7, 19)
gemfield = torch.rand(7, 19)
gemfield = torch.zeros(7, 19, dtype=torch.long)
gemfield = torch.tensor([7.0, 19])

# The second way: the Tensor class itself
gemfield = torch.Tensor([1,2])
