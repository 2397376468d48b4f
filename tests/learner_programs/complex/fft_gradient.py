import torch

x = torch.arange(4.0, requires_grad=True)
spectrum = torch.fft.fft(x)
print(spectrum)
spectrum.abs().sum().backward()
print(x.grad)
y = torch.fft.rfft(x)
print(y.shape)
