"""The seed tutorials as guided lessons, in English and Chinese. Pure data.

Each lesson says what to learn, what to look at, which page shows it best, and which of the
seed programs (`explorer.examples`) to open there. The texts are written for this app and
teach today's PyTorch where the seed notes have aged.
"""

from __future__ import annotations

from dataclasses import dataclass

PLAYGROUND, GRAPH, BACKWARD = "pages/1_Playground.py", "pages/2_Graph.py", "pages/5_Backward.py"
NUMPY, DEVICES = "pages/3_NumPy.py", "pages/4_Devices.py"
CUSTOM, TRAINING = "pages/6_Custom_Function.py", "pages/7_Training.py"


@dataclass(frozen=True)
class Lesson:
    """One lesson: its text, what to look at, and the programs it opens on which page."""

    key: str
    title: dict[str, str]
    text: dict[str, str]
    look: dict[str, str]
    page: str
    examples: tuple[str, ...]


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "what-is-pytorch",
        {"en": "What PyTorch is", "zh": "PyTorch 是什么"},
        {"en": "PyTorch is NumPy-style arrays (tensors) that can live on a GPU, plus "
               "autograd: it records how every result was computed so it can give you "
               "gradients. Each program here runs in real PyTorch.",
         "zh": "PyTorch 提供类似 NumPy 的数组（张量），它们可以放在 GPU 上；另外还有 autograd："
               "它记下每个结果是怎样算出来的，从而能给出梯度。这里的每段程序都在真正的 PyTorch "
               "中运行。"},
        {"en": "Step through the program: after each line the table shows every tensor's "
               "shape, dtype and device.",
         "zh": "逐步执行程序：每行之后，表格都会列出每个张量的形状、dtype 和设备。"},
        PLAYGROUND, ("tensor-create",)),
    Lesson(
        "creating-tensors",
        {"en": "Creating tensors", "zh": "创建张量"},
        {"en": "`torch.empty` only reserves memory (its values are whatever was there), "
               "`torch.rand` and `torch.zeros(..., dtype=torch.long)` fill it, `torch.tensor` "
               "copies Python data, `x.new_ones` and `torch.randn_like` take shape, dtype or "
               "device from an existing tensor, and `x.size()` reports the shape.",
         "zh": "`torch.empty` 只分配内存（数值是内存里原有的内容），`torch.rand` 和 "
               "`torch.zeros(..., dtype=torch.long)` 会填充数值，`torch.tensor` 复制 Python 数据，"
               "`x.new_ones` 和 `torch.randn_like` 沿用已有张量的形状、dtype 或设备，"
               "`x.size()` 给出形状。"},
        {"en": "Watch the dtype column change as x is rebound: float32, int64, float64.",
         "zh": "看 x 被重新赋值时 dtype 一列的变化：float32、int64、float64。"},
        PLAYGROUND, ("tensor-create", "tensor-create-ways")),
    Lesson(
        "operations",
        {"en": "Operations: adding, indexing, view, item", "zh": "运算：加法、索引、view、item"},
        {"en": "`x + y`, `torch.add(x, y)`, `torch.add(x, y, out=result)` and `y.add_(x)` all "
               "add; the trailing `_` means in place: `y` itself changes and its version "
               "counter goes up. `x[:, 1]` indexes like NumPy, `x.view(-1, 8)` reshapes "
               "without copying (-1 is worked out for you), and `.item()` turns a one-element "
               "tensor into a Python number.",
         "zh": "`x + y`、`torch.add(x, y)`、`torch.add(x, y, out=result)` 和 `y.add_(x)` 都是加法；"
               "结尾的 `_` 表示原地操作：`y` 本身被改变，它的版本号会增加。`x[:, 1]` 像 NumPy "
               "一样索引，"
               "`x.view(-1, 8)` 不复制数据就改变形状（-1 由 PyTorch 推算），`.item()` "
               "把只有一个元素的"
               "张量变成 Python 数字。"},
        {"en": "After `y.add_(x)`, y's _version column goes from 0 to 1.",
         "zh": "`y.add_(x)` 之后，y 的 _version 一列从 0 变成 1。"},
        PLAYGROUND, ("tensor-add", "tensor-index", "tensor-view", "tensor-item")),
    Lesson(
        "numpy-bridge",
        {"en": "The NumPy bridge", "zh": "与 NumPy 互相转换"},
        {"en": "`a.numpy()` and `torch.from_numpy(a)` share memory with what they came from, "
               "so an in-place change to one shows in the other. Today every CPU tensor "
               "converts, CharTensor (int8) included, whatever older notes say.",
         "zh": "`a.numpy()` 和 `torch.from_numpy(a)` 与原对象共享内存，所以原地修改其中一个，"
         "另一个也会变。"
               "如今所有 CPU 张量都能转换，包括 CharTensor（int8），旧笔记里的说法已经过时。"},
        {"en": "The badge says shares memory, and the cells `a.add_(1)` changed light up on "
               "both sides.",
         "zh": "标记显示“共享内存”，`a.add_(1)` 改变的格子在两边同时高亮。"},
        NUMPY, ("tensor-to-numpy", "numpy-to-tensor")),
    Lesson(
        "devices",
        {"en": "Devices: CPU and CUDA", "zh": "设备：CPU 与 CUDA"},
        {"en": "`x.to(device)` moves a tensor (a copy on the other device), "
               "`torch.ones_like(x, device=device)` creates one there, and an operation needs "
               "all its tensors on one device. `if torch.cuda.is_available():` keeps a program "
               "working on machines without a GPU.",
         "zh": "`x.to(device)` 把张量移到另一个设备（在那里得到一份副本），"
               "`torch.ones_like(x, device=device)` 直接在那里创建张量，"
               "一次运算的所有张量必须在同一设备上。"
               "`if torch.cuda.is_available():` 让程序在没有 GPU 的机器上也能运行。"},
        {"en": "The device column; and the Devices page for this machine's GPU facts and "
               "what moving data costs.",
         "zh": "看设备一列；再到“设备”页面查看本机的 GPU 信息和搬运数据的开销。"},
        PLAYGROUND, ("tensor-to-device", "tensor-to-device-notebook")),
    Lesson(
        "autograd",
        {"en": "Autograd: requires_grad and grad_fn", "zh": "自动求导：requires_grad 与 grad_fn"},
        {"en": "A tensor made with `requires_grad=True` is a leaf: its grad_fn is None. Every "
               "result computed from it requires grad too and remembers the backward function "
               "that made it (`AddBackward0`, `MulBackward0`...). `requires_grad_(True)` turns "
               "tracking on for a tensor you made; on a computed result you cannot turn it off.",
         "zh": "用 `requires_grad=True` 创建的张量是叶子：它的 grad_fn 是 None。"
         "由它算出的每个结果也需要梯度，"
               "并记住生成它的反向函数（`AddBackward0`、`MulBackward0`……）。`requires_grad_(True)` "
               "可以为你自己创建的张量打开追踪；对计算得到的结果则不能关掉。"},
        {"en": "Step through and watch the graph grow by one node per operation.",
         "zh": "逐步执行，看计算图每做一次运算就多一个节点。"},
        GRAPH, ("autograd-basics", "autograd-grad-fn", "requires-grad-inplace",
                "requires-grad-non-leaf-error")),
    Lesson(
        "backward",
        {"en": "backward() and .grad", "zh": "backward() 与 .grad"},
        {"en": "`out.backward()` walks the graph from out back to the leaves, and each "
               "leaf's `.grad` receives d(out)/d(leaf): 4.5 everywhere in the classic "
               "example. Gradients accumulate: call backward again (keeping the graph with "
               "`retain_graph=True`) and `.grad` doubles until you `zero_()` it. A non-leaf's "
               ".grad stays None unless you call `retain_grad()`.",
         "zh": "`out.backward()` 从 out 沿计算图走回叶子，每个叶子的 `.grad` 得到 d(out)/d(leaf)："
               "经典例子里处处是 4.5。梯度会累加：再调用一次 backward（用 `retain_graph=True` "
               "保留计算图），"
               "`.grad` 就翻倍，直到你用 `zero_()` 清零。非叶子张量的 .grad 保持 None，"
               "除非调用 `retain_grad()`。"},
        {"en": "Press play: the engine runs MeanBackward0, MulBackward0 twice, AddBackward0 "
               "and AccumulateGrad, and the two 2.25s meeting at the add become 4.5.",
         "zh": "点击播放：引擎依次运行 MeanBackward0、两次 MulBackward0、AddBackward0 和 "
               "AccumulateGrad，汇合到加法处的两个 2.25 变成 4.5。"},
        BACKWARD, ("autograd-basics", "non-leaf-grad", "grad-after-backward")),
    Lesson(
        "stop-tracking",
        {"en": "Stopping autograd: detach() and no_grad()", "zh": "停止追踪：detach() 与 "
         "no_grad()"},
        {"en": "`y = x.detach()` gives the same numbers (the same memory, even) without "
               "history, and inside `with torch.no_grad():` nothing is recorded — what you "
               "want for evaluation and for updating weights by hand.",
         "zh": "`y = x.detach()` 得到数值相同（甚至内存相同）但没有计算历史的张量；在 "
               "`with torch.no_grad():` 里什么都不会被记录——模型评估和手动更新权重时正需要这样。"},
        {"en": "The detached tensor is simply absent from the graph, and the page says why.",
         "zh": "被分离的张量根本不出现在计算图里，页面会说明原因。"},
        GRAPH, ("autograd-detach", "autograd-no-grad")),
    Lesson(
        "vector-backward",
        {"en": "Backward from a vector: the vector–Jacobian product",
         "zh": "从向量反向传播：向量-雅可比积"},
        {"en": "backward() needs a scalar. For a vector y, pass a vector v of the same shape: "
               "`y.backward(v)` computes vᵀJ, the gradient of v·y, without ever building the "
               "Jacobian J. The graph's length here depends on the data: define-by-run.",
         "zh": "backward() 需要标量。对向量 y，要传入同形状的向量 v：`y.backward(v)` 计算 vᵀJ，"
               "即 v·y 的梯度，而从不构造雅可比矩阵 J。这里计算图的长度取决于数据："
               "动态建图（define-by-run）。"},
        {"en": "The page shows v, the full Jacobian and vᵀJ next to x.grad; the first example "
               "shows PyTorch's error without v.",
         "zh": "页面并排显示 v、完整的雅可比矩阵和 vᵀJ 以及 x.grad；第一个示例展示不给 v 时 "
         "PyTorch 的报错。"},
        BACKWARD, ("vector-backward-error", "vector-backward-gradients")),
    Lesson(
        "custom-function",
        {"en": "Your own autograd.Function", "zh": "自定义 autograd.Function"},
        {"en": "Subclass `torch.autograd.Function` with static `forward(ctx, ...)` and "
               "`backward(ctx, grad_output)`; keep what backward needs with "
               "`ctx.save_for_backward` and read it back from `ctx.saved_tensors`; use it "
               "through `MyReLU.apply`. A gradient check compares your backward with "
               "numerical derivatives.",
         "zh": "继承 `torch.autograd.Function`，写静态方法 `forward(ctx, ...)` 和 "
               "`backward(ctx, grad_output)`；用 `ctx.save_for_backward` 保存 backward 需要的东西，"
               "再从 `ctx.saved_tensors` 取回；通过 `MyReLU.apply` 使用它。梯度检查会把你的 "
               "backward "
               "与数值导数比较。"},
        {"en": "Your MyReLUBackward node with its saved tensor, your backward running in the "
               "replay, and gradcheck's verdict.",
         "zh": "你的 MyReLUBackward 节点和它保存的张量、重放中运行的你自己的 backward，以及 "
         "gradcheck 的结论。"},
        CUSTOM, ("custom-function-relu",)),
    Lesson(
        "two-layer-network",
        {"en": "A two-layer network trained by hand", "zh": "手动训练一个两层网络"},
        {"en": "Forward pass, loss, `loss.backward()`, then update the weights inside "
               "`torch.no_grad()` and zero their gradients — five hundred times. Every "
               "iteration is a new graph and a new backward pass.",
         "zh": "前向计算、损失、`loss.backward()`，然后在 `torch.no_grad()` "
         "中更新权重并把梯度清零——"
               "重复五百次。每次迭代都是一张新的计算图、一次新的反向传播。"},
        {"en": "The loss curve falling as it trains, the gradient norms of w1 and w2, and "
               "any iteration's backward pass.",
         "zh": "训练过程中下降的损失曲线、w1 和 w2 的梯度范数，以及任意一次迭代的反向传播。"},
        TRAINING, ("my-relu-train",)),
)


def by_key(key: str) -> Lesson:
    """The lesson called `key`."""
    for lesson in LESSONS:
        if lesson.key == key:
            return lesson
    raise KeyError(f"no lesson called {key!r}")
