import torch
# 两层网络训练用的数据和权重
dtype = torch.float
device = torch.device("cpu")
N, D_in, H, D_out = 64, 1000, 100, 10
x = torch.randn(N, D_in, device=device, dtype=dtype)
y = torch.randn(N, D_out, device=device, dtype=dtype)
w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

class MyReLU(torch.autograd.Function):
    """
    继承 torch.autograd.Function 并实现作用于张量的前向和反向传播，
    就能写出自己的自动求导函数。
    """
    @staticmethod
    def forward(ctx, input):
        """
        前向传播接收包含输入的张量，返回包含输出的张量。ctx 是一个上下文对象，
        可以用 ctx.save_for_backward 方法保存反向传播要用的任何对象。
        """
        ctx.save_for_backward(input)
        return input.clamp(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        """
        反向传播接收损失对输出的梯度，需要算出损失对输入的梯度。
        """
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input

learning_rate = 1e-6
for t in range(500):
    # 用 Function.apply 方法调用我们的函数，起个别名 relu
    relu = MyReLU.apply
    # 前向传播：计算预测的 y，其中 ReLU 用我们自定义的自动求导函数计算
    y_pred = relu(x.mm(w1)).mm(w2)
    # 计算并打印损失
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    # 用自动求导计算反向传播
    loss.backward()
    # 用梯度下降更新权重
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad
        # 更新权重后手动把梯度清零
        w1.grad.zero_()
        w2.grad.zero_()
