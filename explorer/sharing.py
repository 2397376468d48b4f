"""Tensors and NumPy arrays side by side: do two variables share memory, which cells changed.

Pure logic for the NumPy page, no Streamlit. The verdict comes from the memory the worker
recorded for each variable (`memory`: [first byte, end) of its elements), never from how the
variables were made. The presets are the lessons people trip over, in English and Chinese.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from explorer.examples import by_key
from explorer.trace import Trace, Variables

Cell = tuple[int, ...]  # the index of one element: () for a 0-d value, (i,) or (i, j)...
ARRAYS = ("tensor", "ndarray")


def is_array(info: dict[str, Any] | None) -> bool:
    """True for a tensor's or an ndarray's description."""
    return info is not None and info.get("kind") in ARRAYS


def overlap(a: dict[str, Any], b: dict[str, Any]) -> tuple[int, int] | None:
    """The bytes [start, end) that both variables' elements span, or None if they are apart.

    Like `np.may_share_memory`: extents that overlap count, on the same device only (a CUDA
    tensor's addresses are GPU memory, so it never shares with a NumPy array).
    """
    if not (is_array(a) and is_array(b)) or a["device"] != b["device"]:
        return None
    if "memory" not in a or "memory" not in b:
        return None
    start, end = max(a["memory"][0], b["memory"][0]), min(a["memory"][1], b["memory"][1])
    return (start, end) if start < end else None


def shares_memory(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True if the two variables' elements overlap in memory: a write to one shows in the other."""
    return overlap(a, b) is not None


def cells(values: Any) -> dict[Cell, Any]:
    """Every element of a nested value list by its index, in row-major order."""
    if not isinstance(values, list):
        return {(): values}
    return {(i, *index): value for i, row in enumerate(values)
            for index, value in cells(row).items()}


def _shape(values: Any) -> list[int]:
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return shape


def changed_cells(now_values: Any, before_values: Any) -> set[Cell]:
    """The cells of `now_values` that differ from `before_values` (None: it did not exist).

    When the nesting differs (a new shape, or a different leading block of a truncated
    tensor) every cell counts as changed.
    """
    now = cells(now_values)
    if before_values is None or _shape(now_values) != _shape(before_values):
        return set(now)
    before = cells(before_values)
    return {index for index, value in now.items() if before[index] != value}


def variable_changes(now: dict[str, Any] | None, before: dict[str, Any] | None) -> set[Cell]:
    """The cells of a variable that changed in one step; a new kind or shape changes them all."""
    if not is_array(now):
        return set()
    same = is_array(before) and before["shape"] == now["shape"]
    return changed_cells(now["values"], before["values"] if same else None)


def array_names(trace: Trace) -> list[str]:
    """Names that hold a tensor or an array at some step, in order of first appearance."""
    names: dict[str, None] = {}
    for step in trace.steps:
        names.update((name, None) for name, info in step.variables.items() if is_array(info))
    return list(names)


def default_pair(trace: Trace, code: str) -> tuple[str | None, str | None]:
    """The pair to show first: the preset's own, else the first tensor and the first array.

    Without both kinds, the first two tensors or arrays; missing names are None.
    """
    final = trace.variables
    lesson = preset_for(code)
    if lesson is not None and all(name in final for name in lesson.pair):
        return lesson.pair
    tensors = [name for name, info in final.items() if info["kind"] == "tensor"]
    arrays = [name for name, info in final.items() if info["kind"] == "ndarray"]
    if tensors and arrays:
        return tensors[0], arrays[0]
    either = [*tensors, *arrays, None, None]
    return either[0], either[1]


def last_change(trace: Trace, left: str | None, right: str | None) -> int:
    """The last step where either variable of the pair changed or the verdict flipped."""
    states = [{}, *(step.variables for step in trace.steps)]
    changes = [index for index, (before, now) in enumerate(pairwise(states))
               if _verdict(now, left, right) != _verdict(before, left, right)
               or any(variable_changes(now.get(name), before.get(name))
                      for name in (left, right))]
    return changes[-1] if changes else len(trace.steps) - 1


def _verdict(variables: Variables, left: str | None, right: str | None) -> bool | None:
    a, b = variables.get(left), variables.get(right)
    return shares_memory(a, b) if is_array(a) and is_array(b) else None


@dataclass(frozen=True)
class Preset:
    """One lesson of the NumPy page: a short program and what it teaches."""

    key: str
    title: dict[str, str]  # {"en": ..., "zh": ...}
    caption: dict[str, str]  # one or two sentences that teach, {"en": ..., "zh": ...}
    code: str
    pair: tuple[str, str]  # the two names shown side by side first


def _src(code: str) -> str:
    return textwrap.dedent(code).strip("\n") + "\n"


PRESETS: tuple[Preset, ...] = (
    Preset(
        key="tensor-to-numpy",
        title={"en": "Tensor → NumPy: .numpy() shares memory",
               "zh": "Tensor → NumPy：.numpy() 共享内存"},
        caption={
            "en": "`b = a.numpy()` copies nothing: `b` reads the tensor's own memory, so "
                  "`a.add_(1)` changes `b` too (the example from the lesson notes).",
            "zh": "`b = a.numpy()` 不复制任何数据：`b` 直接读取张量自己的内存，所以 `a.add_(1)` "
                  "之后 `b` 也变了（课程笔记中的示例）。",
        },
        code=by_key("tensor-to-numpy").code,
        pair=("a", "b"),
    ),
    Preset(
        key="numpy-to-tensor",
        title={"en": "NumPy → Tensor: torch.from_numpy shares memory",
               "zh": "NumPy → Tensor：torch.from_numpy 共享内存"},
        caption={
            "en": "`torch.from_numpy(a)` wraps the array's memory, so writing into the array "
                  "with `np.add(a, 1, out=a)` changes the tensor `b` (the example from the "
                  "lesson notes).",
            "zh": "`torch.from_numpy(a)` 直接使用数组的内存，所以用 `np.add(a, 1, out=a)` "
                  "写入数组时，张量 `b` 也变了（课程笔记中的示例）。",
        },
        code=by_key("numpy-to-tensor").code,
        pair=("b", "a"),
    ),
    Preset(
        key="tensor-vs-as-tensor",
        title={"en": "torch.tensor copies, torch.as_tensor shares",
               "zh": "torch.tensor 复制，torch.as_tensor 共享"},
        caption={
            "en": "`torch.tensor(a)` always copies the data, so `a[0] = 7` leaves `t` alone. "
                  "`torch.as_tensor(a)` reuses the array's memory when it can: pick `s` to "
                  "see it follow `a`.",
            "zh": "`torch.tensor(a)` 总是复制数据，所以 `a[0] = 7` 不影响 `t`。"
                  "`torch.as_tensor(a)` 能复用数组的内存时就复用：选择 `s` 看它随 `a` 一起变。",
        },
        code=_src("""
            import torch
            import numpy as np
            a = np.zeros(3)
            t = torch.tensor(a)     # a copy
            s = torch.as_tensor(a)  # shared
            a[0] = 7
            """),
        pair=("t", "a"),
    ),
    Preset(
        key="rebind-breaks-link",
        title={"en": "a += 1 keeps the link, a = a + 1 breaks it",
               "zh": "a += 1 保持关联，a = a + 1 断开关联"},
        caption={
            "en": "`a += 1` writes into the same memory, so `b` follows. `a = a + 1` makes a "
                  "new tensor and rebinds the name `a` to it: `b` keeps the old memory and "
                  "silently stops following.",
            "zh": "`a += 1` 写入同一块内存，所以 `b` 跟着变。`a = a + 1` 创建了一个新张量，"
                  "并让名字 `a` 指向它：`b` 还留在旧内存上，悄悄地不再跟着变。",
        },
        code=_src("""
            import torch
            a = torch.ones(3)
            b = a.numpy()
            a += 1     # in place: b follows
            a = a + 1  # new tensor: link gone
            """),
        pair=("a", "b"),
    ),
    Preset(
        key="dtype-copies",
        title={"en": "A new dtype is a copy: .double(), astype",
               "zh": "改变 dtype 就是复制：.double()、astype"},
        caption={
            "en": "Another dtype needs new memory: `x.double()` and `n.astype(np.float64)` "
                  "are copies, so `x.add_(1)` leaves `d` and `f` alone while `n` follows.",
            "zh": "换一种 dtype 就需要新的内存：`x.double()` 和 `n.astype(np.float64)` 都是副本，"
                  "所以 `x.add_(1)` 之后 `d` 和 `f` 不变，而 `n` 跟着变。",
        },
        code=_src("""
            import torch
            import numpy as np
            x = torch.ones(3)         # float32
            d = x.double().numpy()    # a copy
            n = x.numpy()             # shared
            f = n.astype(np.float64)  # a copy
            x.add_(1)
            """),
        pair=("x", "d"),
    ),
    Preset(
        key="views-share",
        title={"en": "Views share: x.t(), x[:, 1] and their .numpy()",
               "zh": "视图共享内存：x.t()、x[:, 1] 及其 .numpy()"},
        caption={
            "en": "`x.t()` and `x[:, 1]` are views: the same memory read with other strides. "
                  "NumPy accepts any strides, so `n` and `c` share with `x` and follow "
                  "`x.mul_(10)`.",
            "zh": "`x.t()` 和 `x[:, 1]` 是视图：用不同的步长（strides）读同一块内存。"
                  "NumPy 接受任意步长，所以 `n` 和 `c` 都与 `x` 共享内存，随 `x.mul_(10)` 一起变。",
        },
        code=_src("""
            import torch
            x = torch.arange(1., 7.).view(2, 3)
            t = x.t()      # a view
            n = t.numpy()  # shared
            col = x[:, 1]  # a view
            c = col.numpy()
            x.mul_(10)
            """),
        pair=("x", "n"),
    ),
    Preset(
        key="contiguous-copies",
        title={"en": ".contiguous() of a transpose copies",
               "zh": "转置后的 .contiguous() 会复制"},
        caption={
            "en": "`t = x.t()` is not contiguous, so `t.contiguous()` copies it into a fresh "
                  "row-major block (compare the strides): `c` and its array `n` no longer "
                  "follow `x.mul_(10)`.",
            "zh": "`t = x.t()` 不是连续的，所以 `t.contiguous()` 把它复制到一块新的按行存储的内存"
                  "（比较两边的步长）：`c` 和由它得到的数组 `n` 不再随 `x.mul_(10)` 变化。",
        },
        code=_src("""
            import torch
            x = torch.arange(1., 7.).view(2, 3)
            t = x.t()           # not contiguous
            c = t.contiguous()  # a copy
            n = c.numpy()
            x.mul_(10)
            """),
        pair=("t", "c"),
    ),
    Preset(
        key="requires-grad-detach",
        title={"en": ".numpy() needs .detach() when requires_grad",
               "zh": "requires_grad 的张量要先 .detach() 再 .numpy()"},
        caption={
            "en": "`.numpy()` refuses a tensor that requires grad (see the error). "
                  "`x.detach()` is the same memory without the history, so "
                  "`x.detach().numpy()` works and still shares: `n` follows `x.mul_(2)`.",
            "zh": "`.numpy()` 拒绝需要梯度的张量（见错误说明）。`x.detach()` 是同一块内存、"
                  "只是去掉了计算历史，所以 `x.detach().numpy()` 可以用，而且仍然共享："
                  "`n` 随 `x.mul_(2)` 一起变。",
        },
        code=_src("""
            import torch
            x = torch.ones(3, requires_grad=True)
            n = x.detach().numpy()  # shared
            with torch.no_grad():
                x.mul_(2)
            m = x.numpy()  # RuntimeError
            """),
        pair=("x", "n"),
    ),
    Preset(
        key="cuda-cpu-copy",
        title={"en": "A CUDA tensor comes back with .cpu(), a copy",
               "zh": "CUDA 张量要用 .cpu() 取回，这是一份副本"},
        caption={
            "en": "NumPy reads only CPU memory, so a CUDA tensor must come back with `.cpu()`, "
                  "which copies: on a GPU, `n` keeps its old values after `x.add_(1)`. Without "
                  "a GPU, as here, the `if` branch is skipped and `.cpu()` returns `x` itself, "
                  "so `n` shares its memory.",
            "zh": "NumPy 只能读 CPU 内存，所以 CUDA 张量要先用 `.cpu()` 取回，这会复制数据："
                  "在 GPU 上，`x.add_(1)` 之后 `n` 保持旧值。没有 GPU 时（比如这里），"
                  "`if` 分支被跳过，`.cpu()` 直接返回 `x` 本身，所以 `n` 与它共享内存。",
        },
        code=_src("""
            import torch
            x = torch.ones(3)
            if torch.cuda.is_available():
                x = x.to("cuda")  # to the GPU
            n = x.cpu().numpy()  # CPU memory
            x.add_(1)
            """),
        pair=("x", "n"),
    ),
    Preset(
        key="char-tensor",
        title={"en": "CharTensor (int8) converts today",
               "zh": "CharTensor（int8）如今可以转换"},
        caption={
            "en": "The lesson notes say a CharTensor (int8) cannot be converted to NumPy. That "
                  "note is outdated: today's PyTorch converts it like any CPU tensor, and the "
                  "int8 array shares its memory.",
            "zh": "课程笔记说 CharTensor（int8）不能转换成 NumPy。这条说法已经过时：如今的 "
                  "PyTorch 像转换其他 CPU 张量一样转换它，得到的 int8 数组与它共享内存。",
        },
        code=_src("""
            import torch
            # int8: a CharTensor
            c = torch.ones(3, dtype=torch.int8)
            n = c.numpy()  # works today
            c.add_(1)
            """),
        pair=("c", "n"),
    ),
)

_BY_KEY = {preset.key: preset for preset in PRESETS}


def preset(key: str) -> Preset:
    """The preset called `key`."""
    return _BY_KEY[key]


def preset_for(code: str) -> Preset | None:
    """The preset whose program is exactly `code`, if any."""
    return next((p for p in PRESETS if p.code == code), None)
