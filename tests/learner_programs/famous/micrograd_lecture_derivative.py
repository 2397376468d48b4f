# micrograd lecture (Karpathy, "The spelled-out intro to neural networks and backpropagation"):
# the derivative of f(x) = 3x^2 - 4x + 5 as (f(x + h) - f(x))/h, and the slopes of d = a*b + c;
# the plt.plot cell dropped, the cells' results printed
import numpy as np

def f(x):
  return 3*x**2 - 4*x + 5

print(f(3.0))

xs = np.arange(-5, 5, 0.25)
ys = f(xs)
print(ys)

h = 0.000001
x = 2/3
print((f(x + h) - f(x))/h)

# les get more complex
a = 2.0
b = -3.0
c = 10.0
d = a*b + c
print(d)

h = 0.0001

# inputs
a = 2.0
b = -3.0
c = 10.0

d1 = a*b + c
c += h
d2 = a*b + c

print('d1', d1)
print('d2', d2)
print('slope', (d2 - d1)/h)
