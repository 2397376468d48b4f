"""Plain-language explanations of the errors a learner's PyTorch program can raise.

Errors from PyTorch are lessons: each rule below pairs a pattern on the exception message (and,
where it matters, the exception class) with a short explanation, in English and Simplified
Chinese, of the rule that was broken and what to write instead. Rules are tried in order and the
first match wins. A text may name a group of its pattern in braces, e.g. ``{name}``, to quote a
detail of the message back to the learner.

The patterns follow PyTorch 2.13's wording; each one is exercised against the real error in
``tests/test_explain.py``.
"""

import re
from typing import NamedTuple

from explorer.markdown import code_span


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    error_type: str | None  # exception class name to require, or None for any
    en: str
    zh: str


def _rule(pattern: str, error_type: str | None, en: str, zh: str) -> _Rule:
    return _Rule(re.compile(pattern), error_type, en, zh)


_RULES: tuple[_Rule, ...] = (
    _rule(
        r"grad can be implicitly created only for scalar outputs",
        None,
        "Autograd computes vector-Jacobian products: `y.backward(v)` works out v·(∂y/∂x), and it "
        "can only choose v = 1 for you when `y` is a single number. For a non-scalar `y`, pass a "
        "`gradient` of the same shape, e.g. `y.backward(torch.ones_like(y))`, or reduce to a "
        "scalar first with `y.sum().backward()`, which does the same thing.",
        "autograd 计算的是向量-雅可比积：`y.backward(v)` 求的是 v·(∂y/∂x)，只有当 `y` "
        "是单个数（标量）时它才能替你取 v = 1。对非标量的 `y`，请传入形状相同的 `gradient`，"
        "例如 `y.backward(torch.ones_like(y))`，或先归约成标量 `y.sum().backward()`，两者等价。",
    ),
    _rule(
        r"Mismatch in shape: grad_output\[\d+\] has a shape of (?P<grad>torch\.Size\(\[.*?\]\)) "
        r"and output\[\d+\] has a shape of (?P<out>torch\.Size\(\[.*?\]\))",
        None,
        "The `gradient` passed to `backward()` holds one weight per element of the output, so it "
        "must have exactly the output's shape: here it is {grad} but the output is {out}. "
        "`y.backward(torch.ones_like(y))` always fits.",
        "传给 `backward()` 的 `gradient` 为输出的每个元素各提供一个权重，所以形状必须与输出完全"
        "相同：这里它是 {grad}，而输出是 {out}。`y.backward(torch.ones_like(y))` 总是合适的。",
    ),
    _rule(
        r"Trying to backward through the graph a second time",
        None,
        "To save memory, autograd frees the values it saved for the backward pass as soon as "
        "`backward()` (or `torch.autograd.grad`) has used them, so the same graph cannot be walked "
        "twice. If you really need a second pass, make the first call "
        "`backward(retain_graph=True)`; more often the fix is to redo the forward computation "
        "(e.g. inside the loop) so that each `backward()` gets a fresh graph.",
        "为了节省内存，autograd 在 `backward()`（或 `torch.autograd.grad`）用完为反向传播保存的值后"
        "会立即释放它们，所以同一张计算图不能反向遍历两次。如果确实需要第二次，请在第一次调用时写 "
        "`backward(retain_graph=True)`；更常见的做法是重新执行前向计算（例如放进循环里），"
        "让每次 `backward()` 都有一张新的图。",
    ),
    _rule(
        r"you can only change requires_grad flags of leaf variables",
        None,
        "`requires_grad` can only be switched on or off for leaf tensors, the ones you create "
        "yourself; a computed tensor's setting follows from its inputs. To get a version of a "
        "computed tensor that autograd does not track, use `y.detach()`: it shares the same data "
        "but has no history.",
        "只有叶子张量（你自己直接创建的张量）才能修改 `requires_grad`；计算得到的张量是否需要梯度"
        "由它的输入决定。若想得到一个不被 autograd 追踪的版本，请用 `y.detach()`：它与原张量"
        "共享数据，但没有计算历史。",
    ),
    _rule(
        r"element \d+ of tensors does not require grad and does not have a grad_fn",
        None,
        "`backward()` found nothing to differentiate: this tensor has no `grad_fn`, so none of the "
        "tensors it was computed from had `requires_grad=True` (or it was computed inside "
        "`torch.no_grad()` or from a `.detach()`ed tensor). Create the inputs you want gradients "
        "for with `requires_grad=True` before doing the computation.",
        "`backward()` 找不到可以求导的东西：这个张量没有 `grad_fn`，说明计算它所用的张量都没有"
        "设置 `requires_grad=True`（或者它是在 `torch.no_grad()` 里、或由 `.detach()` "
        "过的张量算出来的）。请在计算之前，把需要求梯度的输入创建为 `requires_grad=True`。",
    ),
    _rule(
        r"Only Tensors of floating point and complex dtype can require gradients",
        None,
        "Gradients only make sense for values that can change smoothly, so only floating-point "
        "(and complex) tensors can have `requires_grad=True`. Create the tensor with a float "
        "dtype, e.g. `torch.tensor([1.0, 2.0], requires_grad=True)` or "
        "`torch.arange(3, dtype=torch.float32, requires_grad=True)`.",
        "梯度只对可以连续变化的值有意义，所以只有浮点（和复数）张量才能设置 `requires_grad=True`。"
        "请用浮点类型创建张量，例如 `torch.tensor([1.0, 2.0], requires_grad=True)` 或 "
        "`torch.arange(3, dtype=torch.float32, requires_grad=True)`。",
    ),
    _rule(
        r"appears to not have been used in the graph",
        None,
        "`torch.autograd.grad` was asked for a gradient with respect to a tensor that the output "
        "was not computed from, so there is no path between them in the graph. Check that you "
        "passed the very tensor used in the computation (not a copy or a re-created one), or pass "
        "`allow_unused=True` to get `None` for it.",
        "`torch.autograd.grad` 被要求对一个与输出无关的张量求梯度，计算图中两者之间没有路径。"
        "请确认传入的正是参与计算的那个张量（而不是副本或重新创建的张量），或者传入 "
        "`allow_unused=True`，让它的梯度返回 `None`。",
    ),
    _rule(
        r"Can't call numpy\(\) on Tensor that requires grad",
        None,
        "NumPy knows nothing about autograd, so PyTorch will not hand it a tensor that is still "
        "being tracked. Use `t.detach().numpy()`: it drops the history but still shares memory "
        "with `t`, so changing one changes the other (add `.copy()` for an independent array).",
        "NumPy 不了解 autograd，所以 PyTorch 不会把仍在被追踪的张量直接交给它。请用 "
        "`t.detach().numpy()`：它去掉了计算历史，但仍与 `t` 共享内存，改一个另一个也会变"
        "（需要独立的数组时再加 `.copy()`）。",
    ),
    _rule(
        r"can't convert (?P<device>\S+) device type tensor to numpy",
        None,
        "NumPy arrays live in ordinary CPU memory, but this tensor is on `{device}`. Bring it "
        "over first with `t.cpu().numpy()` (with `.detach()` before `.numpy()` if it requires "
        "grad); `.cpu()` makes a copy, so changing the array will not change the tensor.",
        "NumPy 数组只能放在普通的 CPU 内存里，而这个张量在 `{device}` 上。请先用 "
        "`t.cpu().numpy()` 把它搬到 CPU（如果它需要梯度，在 `.numpy()` 前加 `.detach()`）；"
        "`.cpu()` 会复制一份，所以修改数组不会改变原张量。",
    ),
    _rule(
        r"Expected all tensors to be on the same device"
        r"|is not on the expected device"
        r"|expected to be in the same device",
        None,
        "An operation can only combine tensors that live on the same device, and PyTorch never "
        "moves data between CPU and GPU behind your back. Choose `device` once at the top of the "
        "program and move everything there, e.g. `x = x.to(device)` for each input and "
        "`model.to(device)` for a model.",
        "一个运算只能组合位于同一设备上的张量，PyTorch 不会悄悄地在 CPU 和 GPU 之间搬运数据。"
        "请在程序开头统一选定 `device`，再把所有东西搬过去，例如对每个输入写 "
        "`x = x.to(device)`，对模型写 `model.to(device)`。",
    ),
    _rule(
        r"leaf Variable that requires grad is being used in an in-place operation",
        None,
        "A leaf tensor that requires grad is where the graph starts and where gradients collect, "
        "so autograd does not let you overwrite it in place (`+=`, `.add_()`, `x[0] = ...`) "
        "while it is tracking. To update it on purpose, as in a gradient-descent step, do it "
        "inside `with torch.no_grad():`; otherwise compute a new tensor, e.g. `y = x + 1`.",
        "需要梯度的叶子张量是计算图的起点，梯度也累积在它上面，所以在 autograd 追踪期间不能原地"
        "修改它（`+=`、`.add_()`、`x[0] = ...`）。如果是有意更新它（例如梯度下降的一步），"
        "请放在 `with torch.no_grad():` 里进行；否则请计算一个新张量，例如 `y = x + 1`。",
    ),
    _rule(
        r"one of the variables needed for gradient computation has been modified by an "
        r"inplace operation",
        None,
        "Autograd saved this tensor during the forward pass to compute gradients later, and it "
        "was then changed in place, so the saved value is stale. Every tensor has a `_version` "
        "counter that goes up with each in-place change, which is how autograd noticed. Use the "
        "out-of-place form (`y = y + 1` rather than `y += 1` or `y.add_(1)`), or `.clone()` the "
        "tensor before modifying it.",
        "autograd 在前向计算时保存了这个张量，用于之后求梯度，但它随后被原地修改了，保存的值已经"
        "过时。每个张量都有一个 `_version` 计数器，每次原地修改都会加一，autograd 正是借此发现的。"
        "请改用非原地写法（用 `y = y + 1` 代替 `y += 1` 或 `y.add_(1)`），或在修改前先 "
        "`.clone()`。",
    ),
    _rule(
        r"view size is not compatible with input tensor's size and stride",
        None,
        "`view` never copies data, so it only works when the new shape can be read straight from "
        "the existing memory layout; after `.t()`, `.transpose()` or `.permute()` the tensor is "
        "usually not contiguous and it cannot. Use `.reshape(...)`, which copies only when it "
        "must, or call `.contiguous()` first.",
        "`view` 从不复制数据，只有当新形状能直接按现有的内存布局读出时才可用；经过 `.t()`、"
        "`.transpose()` 或 `.permute()` 之后，张量通常不再连续，于是不行。请改用 "
        "`.reshape(...)`（只在必要时才复制），或先调用 `.contiguous()`。",
    ),
    _rule(
        r"shape '(?P<shape>\[.*?\])' is invalid for input of size (?P<size>\d+)",
        None,
        "`view` and `reshape` only rearrange elements, so the new shape must hold exactly as many "
        "as the tensor has: {size}, but the sizes in {shape} multiply to a different number. "
        "Pick sizes whose product is {size}, or write `-1` for one of them to let PyTorch work "
        "it out.",
        "`view` 和 `reshape` 只是重新排列元素，所以新形状的元素个数必须与原张量相同，即 {size} 个，"
        "而 {shape} 的各维相乘不等于它。请选择乘积为 {size} 的尺寸，或在其中一维写 `-1`，"
        "让 PyTorch 自动推算。",
    ),
    _rule(
        r"mat1 and mat2 shapes cannot be multiplied"
        r"|size mismatch, got"
        r"|Expected size for first two dimensions of batch2 tensor"
        r"|inconsistent tensor size, expected tensor",
        None,
        "In a matrix product `A @ B` the inner sizes must agree: the last dimension of `A` must "
        "equal the number of rows of `B`, so (n×k) @ (k×m) gives (n×m). Print both `.shape`s; "
        "often one side needs transposing with `.T`, or an `nn.Linear(in_features, ...)` has "
        "`in_features` different from the last dimension of its input.",
        "矩阵乘法 `A @ B` 要求内侧尺寸一致：`A` 的最后一维必须等于 `B` 的行数，"
        "(n×k) @ (k×m) 得到 (n×m)。请打印两边的 `.shape`；常见原因是某一边需要用 `.T` 转置，"
        "或者 `nn.Linear(in_features, ...)` 的 `in_features` 与输入的最后一维不符。",
    ),
    _rule(
        r"The size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) "
        r"at non-singleton dimension (?P<dim>\d+)",
        None,
        "Element-wise operations broadcast: lining the shapes up from the right, each pair of "
        "sizes must be equal or one of them must be 1. Here dimension {dim} has sizes {a} and "
        "{b}, which cannot be matched; check the `.shape`s and add a size-1 dimension where you "
        "mean to repeat, e.g. `x.unsqueeze(1)` or `x[:, None]`.",
        "逐元素运算会进行广播：把形状从右边对齐，每一对尺寸要么相等，要么其中一个为 1。"
        "这里第 {dim} 维的尺寸分别是 {a} 和 {b}，无法对齐；请检查 `.shape`，并在想要重复的地方"
        "添加大小为 1 的维度，例如 `x.unsqueeze(1)` 或 `x[:, None]`。",
    ),
    _rule(
        r"result type (?P<result>\w+) can't be cast to the desired output type (?P<out>\w+)",
        None,
        "An in-place operation (or one given `out=`) must store its result in an existing tensor "
        "of type {out}, but the result is {result} and would lose information. Convert first, "
        "e.g. `x = x.float()`, or use the out-of-place form such as `y = x * 0.5`, which picks a "
        "suitable dtype for you.",
        "原地运算（或带 `out=` 的运算）必须把结果写进一个类型为 {out} 的已有张量，而结果是 "
        "{result}，写进去会丢失信息。请先转换类型，例如 `x = x.float()`，或改用非原地写法，"
        "例如 `y = x * 0.5`，让 PyTorch 自动选择合适的类型。",
    ),
    _rule(
        r"a Tensor with \d+ elements cannot be converted to Scalar"
        r"|only one element tensors can be converted to Python scalars",
        None,
        "`.item()`, `float()` and `int()` turn a tensor holding exactly one value into a plain "
        "Python number, and this tensor holds several. Reduce it first (`t.sum().item()`, "
        "`t.mean().item()`), pick one element (`t[0].item()`), or use `t.tolist()` to get all "
        "the values.",
        "`.item()`、`float()` 和 `int()` 只能把恰好含一个值的张量变成普通 Python 数字，"
        "而这个张量有多个值。请先归约（`t.sum().item()`、`t.mean().item()`），或取出一个元素"
        "（`t[0].item()`），或用 `t.tolist()` 取得全部值。",
    ),
    _rule(
        r"Boolean value of Tensor with more than one value is ambiguous",
        None,
        "Python's `if`, `and`, `or` and `not` need a single True or False, but this tensor holds "
        "several, and PyTorch will not guess whether you mean all of them or any of them. Say "
        "which with `(t > 0).all()` or `(t > 0).any()`, or use `torch.where` to choose element "
        "by element.",
        "Python 的 `if`、`and`、`or`、`not` 需要单个 True 或 False，而这个张量有多个值，"
        "PyTorch 不会替你猜测是指“全部”还是“任一”。请用 `(t > 0).all()` 或 `(t > 0).any()` "
        "明确说明，或用 `torch.where` 逐元素选择。",
    ),
    _rule(
        r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available",
        None,
        'The program asked for a GPU (`device="cuda"` or `.cuda()`), but PyTorch finds no usable '
        "NVIDIA GPU here. Choose the device once, "
        '`device = "cuda" if torch.cuda.is_available() else "cpu"`, and use `.to(device)`, so '
        "the same program runs with or without a GPU.",
        '程序请求使用 GPU（`device="cuda"` 或 `.cuda()`），但 PyTorch 在这里找不到可用的 '
        'NVIDIA GPU。请在开头统一选择设备：`device = "cuda" if torch.cuda.is_available() else '
        '"cpu"`，再用 `.to(device)`，这样同一个程序有没有 GPU 都能运行。',
    ),
    _rule(
        r"expected m1 and m2 to have the same dtype"
        r"|(?:mat1|self) and mat2 must have the same dtype"
        r"|input tensors must have the same dtype"
        r"|expected both vectors to have same dtype"
        r"|expected scalar type \w+ but found \w+",
        None,
        "Matrix products, and layers built on them such as `nn.Linear` and `nn.Conv2d`, need all "
        "their tensors to have the same dtype; unlike `+` or `*`, they do not promote types for "
        "you. Convert one side explicitly, usually with `.float()` to float32 (NumPy arrays "
        "arrive as float64, so `torch.from_numpy(a).float()` is a common fix).",
        "矩阵乘法以及基于它的层（如 `nn.Linear`、`nn.Conv2d`）要求所有张量的 dtype 相同；"
        "它们不像 `+` 或 `*` 那样自动提升类型。请显式转换其中一边，通常用 `.float()` 转成 "
        "float32（NumPy 数组默认是 float64，所以 `torch.from_numpy(a).float()` 是常见的修正）。",
    ),
    _rule(
        r"function (?P<fn>\w+) returned an incorrect number of gradients "
        r"\(expected (?P<expected>\d+), got (?P<got>\d+)\)",
        None,
        "A custom `autograd.Function`'s `backward` must return one gradient for each input of its "
        "`forward` (not counting `ctx`): here `{fn}` should return {expected} but returned {got}. "
        "Return `None` in the place of inputs that need no gradient, such as plain numbers or "
        "flags.",
        "自定义 `autograd.Function` 的 `backward` 必须为 `forward` 的每个输入（不算 `ctx`）"
        "各返回一个梯度：这里 `{fn}` 应返回 {expected} 个，实际返回了 {got} 个。对不需要梯度的输入"
        "（例如普通数字或开关参数），请在对应位置返回 `None`。",
    ),
    _rule(
        r"^name '(?P<name>\w+)' is not defined",
        "NameError",
        "Python has no variable called `{name}` at this point. A name only exists after the line "
        "that assigns it (or the `import` that brings it in) has run, so check the spelling, "
        "capitals included, and that the assignment comes earlier and actually ran.",
        "此时 Python 中没有名为 `{name}` 的变量。变量只有在给它赋值的那一行（或引入它的 "
        "`import`）执行之后才存在，所以请检查拼写（包括大小写），并确认赋值写在前面且确实执行了。",
    ),
    _rule(
        r"index (?P<index>-?\d+) is out of bounds for (?:dimension|axis) (?P<dim>\d+) "
        r"with size (?P<size>\d+)",
        "IndexError",
        "Indices count from 0, so dimension {dim}, of size {size}, takes indices smaller than "
        "{size} (or -{size} to -1, counting back from the end), and {index} is not among them. "
        "Print `t.shape` to see the real sizes; a loop that runs one step too far is the usual "
        "cause.",
        "索引从 0 开始，所以大小为 {size} 的第 {dim} 维只接受小于 {size} 的索引（或从末尾倒数的 "
        "-{size} 到 -1），{index} 不在其中。请打印 `t.shape` 查看实际尺寸；循环多走了一步是最常见"
        "的原因。",
    ),
    _rule(
        r"Dimension out of range \(expected to be in range of (?P<range>\[-?\d+, -?\d+\]), "
        r"but got (?P<got>-?\d+)\)",
        "IndexError",
        "This `dim` argument names an axis the tensor does not have: a tensor with n dimensions "
        "accepts `dim` from 0 to n - 1, or negative values counting from the end, which here is "
        "{range}, but it got {got}. Check `t.dim()` and `t.shape`; a 1-D tensor only has `dim=0`.",
        "参数 `dim` 指定了张量并不存在的维度：n 维张量的 `dim` 取值为 0 到 n - 1，或从末尾倒数的"
        "负数，这里即 {range}，而传入的是 {got}。请检查 `t.dim()` 和 `t.shape`；一维张量只有 "
        "`dim=0`。",
    ),
)


def explain(error_type: str, message: str) -> dict[str, str] | None:
    """Return {"en": ..., "zh": ...} explaining this error, or None when there is nothing to add."""
    for rule in _RULES:
        if rule.error_type not in (None, error_type):
            continue
        match = rule.pattern.search(message)
        if match:  # the message's parts are the program's words: shown as code, never markdown
            details = {k: code_span(v or "") for k, v in match.groupdict().items()}
            return {lang: _unquoted(template).format(**details)
                    for lang, template in (("en", rule.en), ("zh", rule.zh))}
    return None


def _unquoted(template: str) -> str:
    """`template` without the backticks around its `{fields}`: each detail is a code span."""
    return re.sub(r"`(\{\w+\})`", r"\1", template)
