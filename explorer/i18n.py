"""Interface text in English and Chinese: `text(key, lang)`. Lesson texts live with lessons."""

from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "中文"}

TEXT: dict[str, dict[str, str]] = {
    "app_title": {"en": "Autograd Explorer", "zh": "Autograd 探索器"},
    "tagline": {
        "en": "Type a small PyTorch program, run it in real PyTorch, and see what autograd did.",
        "zh": "输入一段小的 PyTorch 程序，用真正的 PyTorch 运行，看看 autograd 做了什么。",
    },
    "language": {"en": "Language", "zh": "语言"},
    "device": {"en": "Device", "zh": "设备"},
    "no_gpu": {
        "en": "CUDA is unavailable: this machine has no GPU, so programs run on the CPU.",
        "zh": "CUDA 不可用：这台机器没有 GPU，程序在 CPU 上运行。",
    },
    "playground": {"en": "Playground", "zh": "练习场"},
    "playground_intro": {
        "en": "Run a program and step through it: after every top-level statement you see "
              "each variable — shape, dtype, device, requires_grad, grad_fn, values and .grad.",
        "zh": "运行程序并逐步查看：每执行一条顶层语句，都能看到每个变量的形状、dtype、设备、"
              "requires_grad、grad_fn、数值和 .grad。",
    },
    "preset": {"en": "Example from the lessons", "zh": "课程中的示例"},
    "code": {"en": "Code", "zh": "代码"},
    "run": {"en": "Run", "zh": "运行"},
    "running": {"en": "Running in an isolated worker…", "zh": "正在隔离的进程中运行……"},
    "step": {"en": "Step", "zh": "步骤"},
    "first": {"en": "« First", "zh": "« 第一步"},
    "back": {"en": "‹ Back", "zh": "‹ 上一步"},
    "forward": {"en": "Forward ›", "zh": "下一步 ›"},
    "last": {"en": "Last »", "zh": "最后 »"},
    "after_line": {"en": "State after line {line}", "zh": "第 {line} 行执行之后的状态"},
    "variables": {"en": "Variables", "zh": "变量"},
    "no_variables": {"en": "No variables yet.", "zh": "还没有变量。"},
    "changed": {"en": "changed in this step", "zh": "本步有变化"},
    "inspect": {"en": "Look inside a variable", "zh": "查看变量的内容"},
    "values": {"en": "values", "zh": "数值"},
    "grad": {"en": ".grad", "zh": ".grad"},
    "truncated": {
        "en": "Showing the leading {shown} of {total} elements.",
        "zh": "只显示 {total} 个元素中的前 {shown} 个。",
    },
    "output": {"en": "Printed output", "zh": "打印输出"},
    "no_output": {"en": "Nothing printed yet.", "zh": "还没有输出。"},
    "error_on_line": {"en": "{type} on line {line}", "zh": "第 {line} 行出现 {type}"},
    "error": {"en": "{type}", "zh": "{type}"},
    "what_it_means": {"en": "What this means", "zh": "这是什么意思"},
    "warnings": {"en": "Warnings", "zh": "警告"},
    "ran_in": {
        "en": "Ran on {device} in {ms:.0f} ms.",
        "zh": "在 {device} 上运行，用时 {ms:.0f} 毫秒。",
    },
    "press_run": {
        "en": "Press **Run** to execute the program.",
        "zh": "点击 **运行** 执行程序。",
    },
    "sandbox_note": {
        "en": "Programs run in a sandbox: torch, numpy (np) and math are available; files, "
              "network and other modules are not. Each run gets {time:g} s and {memory} MiB.",
        "zh": "程序在沙箱中运行：可以使用 torch、numpy (np) 和 math；文件、网络和其他模块不可用。"
              "每次运行限时 {time:g} 秒、内存 {memory} MiB。",
    },
    "home_what": {
        "en": "Every program runs in real PyTorch in an isolated process. The pages show what "
              "autograd really did — the variables after each statement, the graph, the "
              "backward pass with the engine's own gradient values.",
        "zh": "每段程序都在独立进程里用真正的 PyTorch 运行。各个页面展示 autograd 实际做了什么："
              "每条语句之后的变量、计算图，以及引擎自己算出的反向传播梯度。",
    },
    "home": {"en": "Home", "zh": "首页"},
    "home_start": {"en": "Start here", "zh": "从这里开始"},
    "home_examples": {"en": "Examples from the lessons", "zh": "课程中的示例"},
    "open_in_playground": {"en": "Open in the playground", "zh": "在练习场中打开"},
}


def text(key: str, lang: str, **values: object) -> str:
    """The interface string `key` in `lang` (English if missing), formatted with `values`."""
    entry = TEXT[key]
    return entry.get(lang, entry["en"]).format(**values)
