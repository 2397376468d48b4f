import torch

print(torch.is_grad_enabled(), torch.is_inference_mode_enabled())
with torch.no_grad():
    print(torch.is_grad_enabled())
    with torch.enable_grad():
        print(torch.is_grad_enabled())
with torch.inference_mode():
    print(torch.is_grad_enabled(), torch.is_inference_mode_enabled())
print(torch.is_grad_enabled())
