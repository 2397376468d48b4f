import torch


class MyReLU(torch.autograd.Function):

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


dtype = torch.float
device = torch.device("cpu")
# device = torch.device("cuda:0")  # 去掉这行的注释即可在 GPU 上运行

# N 是批大小；D_in 是输入维度；
# H 是隐藏层维度；D_out 是输出维度。
N, D_in, H, D_out = 4, 3, 5, 2

# 创建随机张量作为输入和输出。
x = torch.randn(N, D_in, device=device, dtype=dtype)
y = torch.randn(N, D_out, device=device, dtype=dtype)

# 创建随机的权重张量。
w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(500):
    # 用 Function.apply 调用我们的 Function，这里把它记作 relu。
    relu = MyReLU.apply

    # 前向传播：用张量运算算出预测的 y；
    # 其中的 ReLU 用我们自定义的 autograd 运算。
    y_pred = relu(x.mm(w1)).mm(w2)

    # 计算并打印损失
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # 用 autograd 完成反向传播。
    loss.backward()

    # 用梯度下降更新权重
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad

        # 更新权重后手动把梯度清零
        w1.grad.zero_()
        w2.grad.zero_()
