"""Preset programs for Autograd Explorer, taken from the five tutorial notes in ``seeds/``.

Every code example in the notes (``000`` … ``004``) becomes one runnable, self-contained
preset.  The notes were extracted from PDFs, so their code was cleaned up:

* full-width parentheses and Kangxi-radical look-alike characters were replaced by the
  ordinary characters (``torch.rand（5,3)`` -> ``torch.rand(5,3)``);
* statements glued onto one line were split (``a = torch.randn(2, 2) a = ...``);
* a missing ``)`` was added (``print(x[:,1]``);
* comments that lost their indentation inside a loop body were re-indented;
* snippets that use variables from an earlier snippet (or from another note) get those
  lines prepended, under a comment that says where they come from.

Otherwise the notes' own lines and (Chinese) comments are kept, in the notes' order.
Examples whose lesson *is* an error stop at the failing line and name the error in
``Example.error``; what the note does after the error is a separate example.

``EXAMPLES`` is ordered in two groups: tensor basics, then autograd (which opens with
``autograd-basics``).  Within each note the notes' order is preserved.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

__all__ = ["EXAMPLES", "Example", "by_key"]


@dataclass(frozen=True)
class Example:
    """One preset program shown in the app's example picker."""

    key: str
    """Short stable slug, e.g. ``"autograd-mean"``."""
    title: dict[str, str]
    """Short titles keyed by language: ``{"en": ..., "zh": ...}``."""
    seed: str
    """The seed note the example comes from, e.g. ``"001"``."""
    code: str
    """The runnable program (dedented, ends with a newline)."""
    error: str | None = None
    """For examples whose lesson is an error: a substring of PyTorch's error message."""


def _src(text: str) -> str:
    """Dedent a program written inside this module and make it end with one newline."""
    return textwrap.dedent(text).strip("\n") + "\n"


_SCALAR_ONLY = "grad can be implicitly created only for scalar outputs"
_LEAF_ONLY = "you can only change requires_grad flags of leaf variables"

_TENSOR_EXAMPLES: tuple[Example, ...] = (
    # ---- seed 001: tensor basics -------------------------------------------------------
    Example(
        key="tensor-create",
        title={"en": "Creating tensors", "zh": "创建张量"},
        seed="001",
        code=_src(
            """
            from __future__ import print_function
            import torch
            #创建一个没有初始化的矩阵
            x=torch.empty(5,3)
            print(x)
            #创建一个有初始化的矩阵
            x=torch.rand(5,3)
            print(x)
            #创建一个全零矩阵并可指定数据元素的类型为long
            x=torch.zeros(5,3,dtype=torch.long)
            #直接通过数据创建张量
            x=torch.tensor([2.5,3.5])
            print(x)
            #通过已有的一个张量创建相同尺寸的新张量,利用news_methods得到一个张量
            x = x.new_ones(5,3,dtype=torch.double)
            print(x)
            #利用randn_like方法得到相同张量尺寸的一个新张量，并且采用随机初始化来对其赋值
            y=torch.randn_like(x,dtype=torch.float)
            print(y)
            #得到张量的尺寸
            print(x.size())
            """
        ),
    ),
    Example(
        key="tensor-add",
        title={"en": "Four ways to add tensors", "zh": "加法操作的四种方式"},
        seed="001",
        code=_src(
            """
            from __future__ import print_function
            import torch
            # 来自上一段代码 (from the previous snippet): x 是一个已有的张量
            x=torch.tensor([2.5,3.5])
            x = x.new_ones(5,3,dtype=torch.double)
            y = torch.rand(5,3)
            print(x+y)
            #第二种方式
            print(torch.add(x,y))
            #第三种方式
            #提前设定一个空的张量
            result = torch.empty(5,3)
            #将空的张量作为加法的结果存储张量
            torch.add(x,y,out=result)
            print(result)
            #第四种方式 in-place(原地转换)
            y.add_(x)
            print(y)
            """
        ),
    ),
    Example(
        key="tensor-index",
        title={"en": "NumPy-style indexing", "zh": "用类似 NumPy 的方式索引张量"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from the earlier snippets): x 是 5x3 的全一张量
            x=torch.tensor([2.5,3.5])
            x = x.new_ones(5,3,dtype=torch.double)
            print(x[:,1])
            """
        ),
    ),
    Example(
        key="tensor-view",
        title={"en": "Reshaping with view()", "zh": "改变张量的形状：view()"},
        seed="001",
        code=_src(
            """
            import torch
            x=torch.randn(4,4)
            #tensor.view()操作需要保证数据元素的总数量不变
            y=x.view(16)
            #-1代表自动匹配个数
            z=x.view(-1,8)
            print(x.size(),y.size(),z.size())
            """
        ),
    ),
    Example(
        key="tensor-item",
        title={"en": "One-element tensor to a Python number", "zh": "用 .item() 取出单个值"},
        seed="001",
        code=_src(
            """
            import torch
            x=torch.randn(1)
            print(x)
            print(x.item())
            """
        ),
    ),
    Example(
        key="tensor-to-numpy",
        title={"en": "Tensor to NumPy array (shared memory)", "zh": "Tensor 转换成 NumPy 数组"},
        seed="001",
        code=_src(
            """
            import torch
            a = torch.ones(5)
            print(a)
            #将torch tensor转换成numpy array
            b = a.numpy()
            print(b)
            #对其中一个进行加法操作，另一个也随之被改变
            a.add_(1)
            print(a)
            print(b)
            """
        ),
    ),
    Example(
        key="numpy-to-tensor",
        title={"en": "NumPy array to tensor (shared memory)", "zh": "NumPy 数组转换成 Tensor"},
        seed="001",
        code=_src(
            """
            import torch
            import numpy as np
            a=np.ones(5)
            b=torch.from_numpy(a)
            np.add(a,1,out=a)
            print(a)
            print(b)
            """
        ),
    ),
    Example(
        key="tensor-to-device",
        title={"en": "Moving tensors to the GPU with .to()", "zh": "用 .to() 把张量移动到 GPU"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from an earlier snippet): CPU 上的张量 x
            x=torch.randn(1)
            # 如果服务器上已经安装了GPU和CUDA
            if torch.cuda.is_available():
             # 定义一个设备对象, 这里指定成CUDA, 即使用GPU
             device = torch.device("cuda")
             # 直接在GPU上创建一个Tensor
             y = torch.ones_like(x, device=device)
             # 将在CPU上面的x张量移动到GPU上面
             x = x.to(device)
             # x和y都在GPU上面, 才能支持加法运算
             z = x + y
             # 此处的张量z在GPU上面
             print(z)
             # 也可以将z转移到CPU上面, 并同时指定张量元素的数据类型
             print(z.to("cpu", torch.double))
            """
        ),
    ),
    # ---- seed 000: the same device snippet, from the summary note ------------------------
    Example(
        key="tensor-to-device-recap",
        title={"en": "Device recap: CPU and GPU tensors", "zh": "小节回顾：在 CPU 与 GPU 之间移动"},
        seed="000",
        code=_src(
            """
            import torch
            # x 来自笔记 001 的前面代码 (x comes from earlier in the lesson, see note 001)
            x=torch.randn(1)
            # 如果服务器上已经安装了GPU和CUDA
            if torch.cuda.is_available():
             # 定义一个设备对象, 这里指定成CUDA, 即使用GPU
             device = torch.device("cuda")
             # 直接在GPU上创建一个Tensor
             y = torch.ones_like(x, device=device)
             # 将在CPU上面的x张量移动到GPU上面
             x = x.to(device)
             # x和y都在GPU上面, 才能支持加法运算
             z = x + y
             # 此处的张量z在GPU上面
             print(z)
             # 也可以将z转移到CPU上面, 并同时指定张量元素的数据类型
             print(z.to("cpu", torch.double))
            """
        ),
    ),
    # ---- seed 003: notebook cell In [2] -------------------------------------------------
    Example(
        key="tensor-to-device-notebook",
        title={"en": "Choosing the device with .to()", "zh": "用 .to 方法控制张量所在设备"},
        seed="003",
        code=_src(
            """
            import torch
            # 使用.to方法，控制Tensor所在的设备(cpu, cuda)
            x = torch.empty(3,3)
            if torch.cuda.is_available():
                device = torch.device("cuda")
                y = torch.ones_like(x, device=device)
                x = x.to(device)
                z = x + y
                print(z)
                a=z.to("cpu",torch.double)
                print(a)
            """
        ),
    ),
    # ---- seed 004: ways to create a tensor -----------------------------------------------
    Example(
        key="tensor-create-ways",
        title={"en": "Two ways to create a tensor", "zh": "创建张量的两种方式"},
        seed="004",
        code=_src(
            """
            import torch
            #第一种
            gemfield = torch.empty(7, 19)
            gemfield = torch.rand(7, 19)
            gemfield = torch.zeros(7, 19, dtype=torch.long)
            gemfield = torch.tensor([7.0, 19])

            #第二种
            gemfield = torch.Tensor([1,2])
            """
        ),
    ),
)

_AUTOGRAD_EXAMPLES: tuple[Example, ...] = (
    Example(
        key="autograd-basics",
        title={"en": "Autograd basics: out.backward()", "zh": "自动求导入门：out.backward()"},
        seed="001",
        code=(
            "import torch\n"
            "x = torch.ones(2, 2, requires_grad=True)\n"
            "y = x + 2\n"
            "z = y * y * 3\n"
            "out = z.mean()\n"
            "out.backward()\n"
            "print(x.grad)\n"
        ),
    ),
    # ---- seed 001: autograd ---------------------------------------------------------------
    Example(
        key="autograd-requires-grad",
        title={"en": "A tensor with requires_grad=True", "zh": "创建 requires_grad=True 的张量"},
        seed="001",
        code=_src(
            """
            import torch
            x1=torch.ones(3,3)
            print(x1)
            x = torch.ones(2,2,requires_grad=True)
            print(x)
            """
        ),
    ),
    Example(
        key="autograd-add",
        title={"en": "Adding to a tracked tensor", "zh": "在 requires_grad=True 的张量上做加法"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自上一段代码 (from the previous snippet)
            x = torch.ones(2,2,requires_grad=True)
            y=x+2
            print(y)
            """
        ),
    ),
    Example(
        key="autograd-grad-fn",
        title={"en": "The grad_fn attribute", "zh": "打印 Tensor 的 grad_fn 属性"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from the earlier snippets)
            x = torch.ones(2,2,requires_grad=True)
            y=x+2
            print(x.grad_fn)
            print(y.grad_fn)
            """
        ),
    ),
    Example(
        key="autograd-mean",
        title={"en": "More operations: y*y*3 and mean()", "zh": "更复杂的操作：乘法与 mean"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from the earlier snippets)
            x = torch.ones(2,2,requires_grad=True)
            y=x+2
            z=y*y*3
            out=z.mean()
            print(z,out)
            """
        ),
    ),
    Example(
        key="requires-grad-inplace",
        title={"en": "Turning tracking on: requires_grad_()", "zh": "用 requires_grad_() 原地修改"},
        seed="001",
        code=_src(
            """
            import torch
            a = torch.randn(2, 2)
            a = ((a * 3) / (a - 1))
            print(a.requires_grad)
            a.requires_grad_(True)
            print(a.requires_grad)
            b = (a * a).sum()
            print(b.grad_fn)
            """
        ),
    ),
    Example(
        key="autograd-backward",
        title={"en": "Backward pass: out.backward()", "zh": "反向传播：out.backward()"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from the earlier snippets)
            x = torch.ones(2,2,requires_grad=True)
            y=x+2
            z=y*y*3
            out=z.mean()
            out.backward()
            print(x.grad)
            """
        ),
    ),
    Example(
        key="autograd-no-grad",
        title={"en": "Stop tracking: torch.no_grad()", "zh": "用 torch.no_grad() 停止自动求导"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from an earlier snippet)
            x = torch.ones(2,2,requires_grad=True)
            print(x.requires_grad)
            print((x ** 2).requires_grad)
            with torch.no_grad():
             print((x ** 2).requires_grad)
            """
        ),
    ),
    Example(
        key="autograd-detach",
        title={"en": "detach(): same data, no gradient", "zh": "detach()：内容相同但不需要求导"},
        seed="001",
        code=_src(
            """
            import torch
            # 来自前面的代码 (from an earlier snippet)
            x = torch.ones(2,2,requires_grad=True)
            print(x.requires_grad)
            y = x.detach()
            print(y.requires_grad)
            print(x.eq(y).all())
            """
        ),
    ),
    # ---- seed 002 -----------------------------------------------------------------------
    Example(
        key="no-grad-eval",
        title={"en": "no_grad() for evaluation", "zh": "评估模型时使用 no_grad()"},
        seed="002",
        code=_src(
            """
            import torch
            # x 在本笔记中没有定义，取自笔记 001 (x is not defined in this note; from note 001)
            x = torch.ones(2, 2, requires_grad=True)
            print(x.requires_grad) # True
            print((x ** 2).requires_grad) # True
            with torch.no_grad():
                print((x ** 2).requires_grad) # False
            """
        ),
    ),
    Example(
        key="custom-function-relu",
        title={"en": "Custom autograd Function: MyReLU", "zh": "自定义自动求导函数 MyReLU"},
        seed="002",
        code=_src(
            '''
            import torch
            # 以下几行取自笔记 004：本笔记用到 x, y, w1, w2 但没有定义它们
            # (setup from note 004: this note uses x, y, w1, w2 without defining them)
            dtype = torch.float
            device = torch.device("cpu")
            N, D_in, H, D_out = 64, 1000, 100, 10
            x = torch.randn(N, D_in, device=device, dtype=dtype)
            y = torch.randn(N, D_out, device=device, dtype=dtype)
            w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
            w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

            class MyReLU(torch.autograd.Function):
                """
                We can implement our own custom autograd Functions by subclassing
                torch.autograd.Function and implementing the forward and backward passes
                which operate on Tensors.
                """
                @staticmethod
                def forward(ctx, input):
                    """
                    In the forward pass we receive a Tensor containing the input and return
                    a Tensor containing the output. ctx is a context object that can be used
                    to stash information for backward computation. You can cache arbitrary
                    objects for use in the backward pass using the ctx.save_for_backward method.
                    """
                    ctx.save_for_backward(input)
                    return input.clamp(min=0)
                @staticmethod
                def backward(ctx, grad_output):
                    """
                    In the backward pass we receive a Tensor containing the gradient of the loss
                    with respect to the output, and we need to compute the gradient of the loss
                    with respect to the input.
                    """
                    input, = ctx.saved_tensors
                    grad_input = grad_output.clone()
                    grad_input[input < 0] = 0
                    return grad_input

            learning_rate = 1e-6
            for t in range(500):
                # To apply our Function, we use Function.apply method. We alias this as 'relu'.
                relu = MyReLU.apply
                # Forward pass: compute predicted y using operations; we compute
                # ReLU using our custom autograd operation.
                y_pred = relu(x.mm(w1)).mm(w2)
                # Compute and print loss
                loss = (y_pred - y).pow(2).sum()
                if t % 100 == 99:
                    print(t, loss.item())
                # Use autograd to compute the backward pass.
                loss.backward()
                # Update weights using gradient descent
                with torch.no_grad():
                    w1 -= learning_rate * w1.grad
                    w2 -= learning_rate * w2.grad
                    # Manually zero the gradients after updating weights
                    w1.grad.zero_()
                    w2.grad.zero_()
            '''
        ),
    ),
    Example(
        key="inplace-weights",
        title={"en": "In-place ops: weights.requires_grad_()", "zh": "原位操作：requires_grad_()"},
        seed="002",
        code=_src(
            """
            import torch
            import math

            weights = torch.randn(784, 10) / math.sqrt(784)
            weights.requires_grad_()
            bias = torch.zeros(10, requires_grad=True)
            """
        ),
    ),
    # ---- seed 003: notebook cells -------------------------------------------------------
    Example(
        key="autograd-track-3x3",
        title={"en": "Tracking a computation (3x3)", "zh": "创建张量并追踪其计算历史"},
        seed="003",
        code=_src(
            """
            import torch
            # 创建一个张量，指定requires_grad = True这个属性，用来追踪其计算历史：
            x = torch.ones(3, 3, requires_grad=True)
            print(x)
            # 对张量进行一个简单的一次函数操作：
            y = 2*x+1
            print(y)
            # 再对y进行一个较复杂的函数操作：
            z = y*y*3
            z_mean = z.mean()
            print(z,z_mean)
            """
        ),
    ),
    Example(
        key="grad-before-backward",
        title={"en": "x.grad before backward()", "zh": "反向传播之前的 x.grad"},
        seed="003",
        code=_src(
            """
            import torch
            # 来自前面的单元格 In [3] (from the earlier cell In [3])
            x = torch.ones(3, 3, requires_grad=True)
            y = 2*x+1
            z = y*y*3
            z_mean = z.mean()
            ## 反向求导：
            print(x.grad)
            """
        ),
    ),
    Example(
        key="grad-after-backward",
        title={"en": "x.grad after backward()", "zh": "backward() 之后 x 的梯度"},
        seed="003",
        code=_src(
            """
            import torch
            # 来自前面的单元格 In [3] (from the earlier cell In [3])
            x = torch.ones(3, 3, requires_grad=True)
            y = 2*x+1
            z = y*y*3
            z_mean = z.mean()
            ## 经过了backward()方法后，torch会计算出x所带有的梯度：
            z_mean.backward()
            print(x.grad)
            """
        ),
    ),
    Example(
        key="y-requires-grad",
        title={"en": "Does y require grad?", "zh": "y 由 x 创建，它需要梯度吗？"},
        seed="003",
        code=_src(
            """
            import torch
            # 来自前面的单元格 In [3] (from the earlier cell In [3])
            x = torch.ones(3, 3, requires_grad=True)
            y = 2*x+1
            ## y是由x创建的，那么y的梯度呢？
            print(y.requires_grad)
            """
        ),
    ),
    Example(
        key="non-leaf-grad",
        title={"en": "y.grad of a non-leaf tensor", "zh": "非叶子张量 y 的 .grad"},
        seed="003",
        code=_src(
            """
            import torch
            # 来自前面的单元格 In [3] 和 In [6] (from the earlier cells In [3] and In [6])
            x = torch.ones(3, 3, requires_grad=True)
            y = 2*x+1
            z = y*y*3
            z_mean = z.mean()
            z_mean.backward()
            print(y.grad)
            """
        ),
    ),
    Example(
        key="grow-until-norm",
        title={"en": "Doubling y until its norm reaches 1000", "zh": "再构造一个例子：y 不断乘 2"},
        seed="003",
        code=_src(
            """
            import torch
            # 再构造一个例子：
            x = torch.randn(3, requires_grad=True)

            y = x*2
            print(x.shape)
            while y.data.norm() < 1000:
                y = y * 2
            print(y)
            """
        ),
    ),
    Example(
        key="vector-backward-error",
        title={"en": "backward() on a vector: error", "zh": "向量直接 backward() 会报错"},
        seed="003",
        code=_src(
            """
            import torch
            # 来自前面的单元格 In [9] 和 In [10] (from the earlier cells In [9] and In [10])
            x = torch.randn(3, requires_grad=True)
            y = x*2
            while y.data.norm() < 1000:
                y = y * 2
            ## 可以发现，作为一个向量，其再做反向传播的时候无法直接计算出完整的雅可比行列式
            #RuntimeError: grad can be implicitly created only
            #for scalar outputs
            y.backward()
            """
        ),
        error=_SCALAR_ONLY,
    ),
    Example(
        key="vector-backward-gradients",
        title={"en": "backward(gradients) on a vector", "zh": "把向量作为参数传入 backward"},
        seed="003",
        code=_src(
            """
            import torch
            # 来自前面的单元格 In [9] 和 In [10] (from the earlier cells In [9] and In [10])
            x = torch.randn(3, requires_grad=True)
            y = x*2
            while y.data.norm() < 1000:
                y = y * 2
            # 这个时候 需要将向量作为参数传入backward：
            gradients = torch.tensor([0.1,1.0,0.0001], dtype=torch.float)
            y.backward(gradients)

            print(x.grad)
            """
        ),
    ),
    # ---- seed 004 -----------------------------------------------------------------------
    Example(
        key="requires-grad-non-leaf-error",
        title={
            "en": "requires_grad_(False) on a computed tensor: error",
            "zh": "修改运算结果的 requires_grad 会报错",
        },
        seed="004",
        code=_src(
            """
            import torch
            a = torch.randn(2, 2)
            a = ((a * 3) / (a - 1))
            print(a.requires_grad) #False
            a.requires_grad_(True)
            print(a.requires_grad) #True
            b = (a * a).sum()
            print(b.requires_grad) #True
            b.requires_grad_(False) #runtime err
            """
        ),
        error=_LEAF_ONLY,
    ),
    Example(
        key="scalar-backward",
        title={"en": "d(out)/d(x) for a scalar out", "zh": "标量求导：d(out)/d(x)"},
        seed="004",
        code=_src(
            """
            import torch
            # x 和 out 在本笔记中没有定义，取自笔记 001 (x and out come from note 001)
            x = torch.ones(2, 2, requires_grad=True)
            y = x + 2
            z = y * y * 3
            out = z.mean()
            # i.e 求 d(out)/d(x)
            out.backward()
            print(x.grad)
            """
        ),
    ),
    Example(
        key="vector-backward-v",
        title={"en": "Vector output: y.backward(v)", "zh": "非标量输出：y.backward(v)"},
        seed="004",
        code=_src(
            """
            import torch
            # x 和 y 在本笔记中没有定义，取自笔记 003 (x and y come from note 003)
            x = torch.randn(3, requires_grad=True)
            y = x*2
            while y.data.norm() < 1000:
                y = y * 2
            v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
            y.backward(v)
            print(x.grad)
            """
        ),
    ),
    Example(
        key="my-relu-train",
        title={"en": "Training a two-layer net with MyReLU", "zh": "用自定义 MyReLU 训练两层网络"},
        seed="004",
        code=_src(
            """
            # demo in TUTORIAL

            # -*- coding: utf-8 -*-
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
            # device = torch.device("cuda:0") # Uncomment this to run on GPU

            # N is batch size; D_in is input dimension;
            # H is hidden dimension; D_out is output dimension.
            N, D_in, H, D_out = 64, 1000, 100, 10

            # Create random Tensors to hold input and outputs.
            x = torch.randn(N, D_in, device=device, dtype=dtype)
            y = torch.randn(N, D_out, device=device, dtype=dtype)

            # Create random Tensors for weights.
            w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
            w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

            learning_rate = 1e-6
            for t in range(500):
                # To apply our Function, we use Function.apply method. We alias this as 'relu'.
                relu = MyReLU.apply

                # Forward pass: compute predicted y using operations; we compute
                # ReLU using our custom autograd operation.
                y_pred = relu(x.mm(w1)).mm(w2)

                # Compute and print loss
                loss = (y_pred - y).pow(2).sum()
                if t % 100 == 99:
                    print(t, loss.item())

                # Use autograd to compute the backward pass.
                loss.backward()

                # Update weights using gradient descent
                with torch.no_grad():
                    w1 -= learning_rate * w1.grad
                    w2 -= learning_rate * w2.grad

                    # Manually zero the gradients after updating weights
                    w1.grad.zero_()
                    w2.grad.zero_()
            """
        ),
    ),
)

EXAMPLES: tuple[Example, ...] = _TENSOR_EXAMPLES + _AUTOGRAD_EXAMPLES
"""All presets: tensor basics first, then autograd (starting with ``autograd-basics``)."""

_BY_KEY: dict[str, Example] = {example.key: example for example in EXAMPLES}


def by_key(key: str) -> Example:
    """Return the example called ``key``; raise ``KeyError`` naming the known keys if absent."""
    try:
        return _BY_KEY[key]
    except KeyError:
        known = ", ".join(_BY_KEY)
        raise KeyError(f"no example with key {key!r}; known keys: {known}") from None
