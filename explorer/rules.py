"""Each backward node's local derivative rule, in words and math (English and Chinese).

`rule(name)` takes a node's class name (`MulBackward0`, `AccumulateGrad`, a custom
Function's `MyReLUBackward`) and says what the node does with the gradient it receives.
"""

from __future__ import annotations

import re

# (op name without the Backward suffix and number, English, Chinese). g is the incoming
# gradient ∂L/∂out; each rule says what goes back to the inputs.
RULES: tuple[tuple[str, str, str], ...] = (
    ("Add", "out = a + α·b: ∂out/∂a = 1, ∂out/∂b = α. The gradient g goes back to both inputs "
            "unchanged (times α for b), summed over any broadcast dimensions.",
            "out = a + α·b：∂out/∂a = 1，∂out/∂b = α。梯度 g 原样传回两个输入（b 乘以 α），"
            "被广播的维度会求和。"),
    ("Sub", "out = a − α·b: a receives g, b receives −α·g.",
            "out = a − α·b：a 得到 g，b 得到 −α·g。"),
    ("Mul", "out = a·b: a receives g·b and b receives g·a — each input gets the gradient "
            "times the other factor, which is why mul saves its inputs.",
            "out = a·b：a 得到 g·b，b 得到 g·a——每个输入得到梯度乘以另一个因子，"
            "所以乘法要保存输入。"),
    ("Div", "out = a / b: a receives g / b, b receives −g·a / b².",
            "out = a / b：a 得到 g / b，b 得到 −g·a / b²。"),
    ("Pow", "out = aⁿ: a receives g·n·aⁿ⁻¹.", "out = aⁿ：a 得到 g·n·aⁿ⁻¹。"),
    ("Mean", "out = mean(a) over N elements: every element of a receives g / N.",
             "out = mean(a)，共 N 个元素：a 的每个元素得到 g / N。"),
    ("Sum", "out = sum(a): every element of a receives g (copied, expanded to a's shape).",
            "out = sum(a)：a 的每个元素都得到 g（按 a 的形状复制展开）。"),
    ("(Mm|Matmul|Bmm|Addmm|Mv)", "out = A @ B: A receives g @ Bᵀ and B receives Aᵀ @ g.",
                                 "out = A @ B：A 得到 g @ Bᵀ，B 得到 Aᵀ @ g。"),
    ("(Relu|Threshold)", "out = max(a, 0): a receives g where a > 0 and 0 elsewhere.",
                         "out = max(a, 0)：a > 0 的位置得到 g，其余位置得到 0。"),
    ("Clamp(Min|Max)?", "out = clamp(a): a receives g where a was inside the limits, 0 where "
                        "it was clamped.",
                        "out = clamp(a)：在范围内的位置得到 g，被截断的位置得到 0。"),
    ("Sigmoid", "out = σ(a): a receives g·out·(1 − out).",
                "out = σ(a)：a 得到 g·out·(1 − out)。"),
    ("Tanh", "out = tanh(a): a receives g·(1 − out²).", "out = tanh(a)：a 得到 g·(1 − out²)。"),
    ("Exp", "out = eᵃ: a receives g·out (exp saves its result).",
            "out = eᵃ：a 得到 g·out（exp 保存的是它的结果）。"),
    ("Log", "out = ln a: a receives g / a.", "out = ln a：a 得到 g / a。"),
    ("(View|Reshape|UnsafeView|ReshapeAlias|Squeeze|Unsqueeze|T|Transpose|Permute)",
     "A view or reshape moves no numbers: g is reshaped (or transposed) back to a's shape.",
     "view / reshape 不改变数值：g 被变形（或转置）回 a 的形状。"),
    ("Expand", "out = a expanded: a receives g summed over the expanded dimensions.",
               "out = a 扩展后的结果：a 得到 g 在扩展维度上的和。"),
    ("(Index|Select|Slice|Gather|IndexPut)",
     "out = a[index]: a receives zeros with g written (added) at the indexed positions.",
     "out = a[index]：a 得到一个全零张量，在被索引的位置写入（累加）g。"),
    ("Clone", "out = a copy of a: g goes back unchanged.", "out = a 的副本：g 原样传回。"),
    ("(ToCopy|Copy)", "A device or dtype move: g is moved back to a's device and dtype.",
                      "设备或 dtype 的转换：g 被转回 a 所在的设备和 dtype。"),
    ("AccumulateGrad", "The end of the line: g is added into the leaf's .grad (accumulated "
                       "across backward calls until you zero it).",
                       "终点：g 被加到叶子张量的 .grad 上（多次 backward 会一直累加，"
                       "直到你把它清零）。"),
)
CUSTOM = ("Your own autograd.Function: the engine ran the backward() you wrote, with ctx "
          "holding what forward() saved.",
          "你自定义的 autograd.Function：引擎运行了你写的 backward()，ctx 里是 forward() "
          "保存的内容。")
UNKNOWN = ("This node applies the chain rule for its op: what it received times the op's "
           "local derivative.", "这个节点对它的运算应用链式法则：收到的梯度乘以该运算的局部导数。")
_COMPILED = [(re.compile(f"^{pattern}(Backward\\d*)?$"), en, zh) for pattern, en, zh in RULES]


def rule(name: str, lang: str = "en", custom: bool = False) -> str:
    """The local derivative rule of a backward node called `name`."""
    if custom:
        return CUSTOM[lang == "zh"]
    for pattern, en, zh in _COMPILED:
        if pattern.match(name):
            return zh if lang == "zh" else en
    return UNKNOWN[lang == "zh"]
