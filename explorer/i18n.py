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
    "play": {"en": "▶ Play", "zh": "▶ 播放"},
    "pause": {"en": "❚❚ Pause", "zh": "❚❚ 暂停"},
    "speed": {"en": "Speed", "zh": "速度"},
    "slow": {"en": "Slow", "zh": "慢"},
    "normal": {"en": "Normal", "zh": "正常"},
    "fast": {"en": "Fast", "zh": "快"},
    "back": {"en": "‹ Back", "zh": "‹ 上一步"},
    "forward": {"en": "Forward ›", "zh": "下一步 ›"},
    "last": {"en": "Last »", "zh": "最后 »"},
    "after_line": {"en": "State after line {line}", "zh": "第 {line} 行执行之后的状态"},
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
    "ran_in": {
        "en": "Ran on {device} in {ms:.0f} ms, with {threads} PyTorch thread(s).",
        "zh": "在 {device} 上运行，用时 {ms:.0f} 毫秒，PyTorch 线程数 {threads}。",
    },
    "press_run": {
        "en": "Press **Run** to execute the program.",
        "zh": "点击 **运行** 执行程序。",
    },
    "share": {"en": "Copy a link to this page", "zh": "复制本页链接"},
    "share_copied": {
        "en": "Link copied: it opens this page as you see it now.",
        "zh": "链接已复制：打开它会看到与现在相同的页面。",
    },
    "share_by_hand": {"en": "Copy this link:", "zh": "请复制这个链接："},
    "share_too_long": {
        "en": "This program is too long to share as a link.",
        "zh": "程序太长，无法放进链接。",
    },
    "link_opened": {
        "en": ":material/link: Opened from a shared link: this is the program that ran, in "
              "the same sandbox as any other.",
        "zh": ":material/link: 来自分享的链接：运行的就是上面这段程序，"
              "与其他程序一样在沙箱中运行。",
    },
    "link_refused": {
        "en": "This link could not be opened: {reason} Showing the page as it starts.",
        "zh": "无法打开这个链接：{reason}现在显示的是页面的初始状态。",
    },
    "link_corrupt": {
        "en": "its program is damaged (was the link cut short or changed?).",
        "zh": "其中的程序已损坏（链接是否被截断或改动过？）。",
    },
    "link_too_big": {
        "en": "its program unpacks to more than {limit} KiB.",
        "zh": "其中的程序解压后超过 {limit} KiB。",
    },
    "link_too_long": {
        "en": "it is longer than {limit:,} characters.",
        "zh": "它超过了 {limit:,} 个字符。",
    },
    "link_dropped": {
        "en": "Part of this link could not be used and was left out: {names}.",
        "zh": "链接中有部分内容无法使用，已忽略：{names}。",
    },
    "link_device": {
        "en": "This link asks for the device {device}, which this server does not have: "
              "programs run on the CPU.",
        "zh": "这个链接要求使用设备 {device}，但本服务器没有：程序在 CPU 上运行。",
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
    "lessons_title": {"en": "Lessons", "zh": "课程"},
    "lesson_look": {"en": "What to look at:", "zh": "看点："},
    "lesson_open": {"en": "Open “{title}” in {page}", "zh": "在{page}中打开“{title}”"},
    "custom_page": {"en": "Custom Function", "zh": "自定义 Function"},
    "custom_intro": {
        "en": "Your own torch.autograd.Function: its node in the graph with what it saved, "
              "your backward() running in the replay, and a gradient check of it.",
        "zh": "你自己的 torch.autograd.Function：它在计算图中的节点和保存的张量、"
        "在重放中运行的你的 "
              "backward()，以及对它的梯度检查。",
    },
    "tab_check": {"en": "Gradient check", "zh": "梯度检查"},
    "tab_graph": {"en": "Graph", "zh": "计算图"},
    "tab_backward": {"en": "Backward pass", "zh": "反向传播"},
    "no_function": {"en": "This program defines no torch.autograd.Function class.",
                    "zh": "这段程序没有定义 torch.autograd.Function 子类。"},
    "gradcheck_explain": {
        "en": "torch.autograd.gradcheck runs your backward on a random double-precision input "
              "and compares it with numerical derivatives (finite differences); the gradient is "
              "also compared with autograd's own ReLU.",
        "zh": "torch.autograd.gradcheck 在随机的双精度输入上运行你的 backward，并与数值导数"
              "（有限差分）比较；同时把梯度与 autograd 自带的 ReLU 的梯度比较。",
    },
    "gradcheck_running": {"en": "Checking gradients…", "zh": "正在检查梯度……"},
    "gradcheck_pass": {"en": "gradcheck passed: {name}.backward agrees with numerical "
                             "derivatives.",
                       "zh": "gradcheck 通过：{name}.backward 与数值导数一致。"},
    "gradcheck_fail": {"en": "gradcheck failed: {name}.backward does not match numerical "
                             "derivatives (or could not be checked, see above).",
                       "zh": "gradcheck 未通过：{name}.backward 与数值导数不一致（或无法检查，"
                       "见上方）。"},
    "matches_relu": {"en": "Its gradient equals autograd's torch.relu gradient.",
                     "zh": "它的梯度与 autograd 的 torch.relu 梯度相同。"},
    "differs_relu": {"en": "Its gradient differs from autograd's torch.relu gradient (fine "
                           "if {name} is not a ReLU).",
                     "zh": "它的梯度与 autograd 的 torch.relu 梯度不同（如果 {name} 本来就不是 "
                     "ReLU，"
                           "这没有问题）。"},
    "check_program": {"en": "The check that ran", "zh": "运行的检查程序"},
    "training_page": {"en": "Training", "zh": "训练"},
    "training_intro": {
        "en": "The two-layer network from the lesson notes, trained by hand with your custom "
              "ReLU: forward, loss, backward, update, zero the gradients. The loss is drawn as "
              "it falls; open any iteration's backward pass below.",
        "zh": "课程笔记中的两层网络，用你自定义的 ReLU 手动训练：前向、损失、反向、更新、梯度清零。"
              "损失下降的过程会实时画出；在下方可以打开任意一次迭代的反向传播。",
    },
    "batch": {"en": "N (batch)", "zh": "N（批大小）"},
    "learning_rate": {"en": "Learning rate", "zh": "学习率"},
    "iterations": {"en": "Iterations", "zh": "迭代次数"},
    "train": {"en": "Train", "zh": "开始训练"},
    "train_first": {"en": "Press **Train**: the seed's settings are filled in.",
                    "zh": "点击 **开始训练**：已填入课程笔记中的设置。"},
    "settings_changed": {"en": "The settings changed since this run; press Train to rerun.",
                         "zh": "设置在这次运行之后改变了；点击“开始训练”重新运行。"},
    "loss_fell": {"en": "The loss fell from {first:.4g} to {last:.4g}.",
                  "zh": "损失从 {first:.4g} 降到了 {last:.4g}。"},
    "loss_rose": {"en": "The loss did not fall ({first:.4g} → {last:.4g}): try a smaller "
                        "learning rate.",
                  "zh": "损失没有下降（{first:.4g} → {last:.4g}）：试试更小的学习率。"},
    "training_program": {"en": "The program that ran", "zh": "运行的程序"},
    "training_started": {"en": "Starting…", "zh": "正在开始……"},
    "training_progress": {"en": "Iteration {i} of {n} · loss {loss:.4g}",
                          "zh": "第 {i} / {n} 次迭代 · 损失 {loss:.4g}"},
    "iteration_title": {"en": "Any iteration's backward pass", "zh": "任意一次迭代的反向传播"},
    "iteration": {"en": "Iteration", "zh": "迭代"},
    "loss": {"en": "Loss", "zh": "损失"},
    "grad_norms": {"en": "Gradient norms", "zh": "梯度范数"},
    "open_iteration": {"en": "Open the backward pass of iteration {k}",
                       "zh": "打开第 {k} 次迭代的反向传播"},
    "rerunning": {"en": "Running the same seeded program again, recording iteration {k}…",
                  "zh": "用相同的随机种子重新运行程序，记录第 {k} 次迭代……"},
    "graph_page": {"en": "Autograd graph", "zh": "计算图"},
    "graph_intro": {
        "en": "The grad_fn graph autograd records as the program runs, drawn as torchviz draws "
              "it: grey backward nodes, blue leaves whose .grad backward fills, orange saved "
              "tensors, green outputs. Step through the program to watch it grow.",
        "zh": "程序运行时 autograd 记录下的 grad_fn 计算图，画法与 torchviz 相同：灰色是反向节点，"
              "蓝色是反向传播会填充 .grad 的叶子张量，橙色是保存的张量，绿色是输出。"
              "逐步执行程序，看计算图如何长出来。",
    },
    "roots": {"en": "Graph of", "zh": "显示这些张量的计算图"},
    "fold_modules": {"en": "Fold modules into one node", "zh": "将模块折叠为一个节点"},
    "show_saved": {"en": "Saved tensors", "zh": "保存的张量"},
    "show_attrs": {"en": "Node attributes", "zh": "节点属性"},
    "no_graph": {
        "en": "No tensor requires grad yet, so autograd has recorded nothing.",
        "zh": "还没有需要梯度的张量，所以 autograd 还没有记录任何东西。",
    },
    "not_in_graph": {
        "en": "Not in the graph: {names}. These tensors do not require grad — made without "
              "requires_grad=True, by .detach(), or under torch.no_grad() — so autograd "
              "recorded nothing for them.",
        "zh": "不在计算图中：{names}。这些张量不需要梯度（创建时没有 requires_grad=True、"
              "用了 .detach()，或在 torch.no_grad() 中计算），"
              "所以 autograd 没有为它们记录任何东西。",
    },
    "collapsed": {
        "en": "The graph is large: {chains} chains of one repeated op ({nodes:,} nodes) are "
              "drawn as single grey boxes.",
        "zh": "计算图很大：{chains} 条重复同一操作的链（共 {nodes:,} 个节点）各画成一个灰色方框。",
    },
    "expand": {"en": "Expand collapsed chains (slow for big graphs)",
               "zh": "展开折叠的链（大图会很慢）"},
    "graph_note": {"en": "Graph: {note}", "zh": "计算图：{note}"},
    "laying_out": {"en": "Laying out the graph…", "zh": "正在排布计算图……"},
    "layout_failed": {"en": "The graph could not be drawn: {reason}",
                      "zh": "无法绘制计算图：{reason}"},
    "layout_too_big": {
        "en": "it has {count:,} nodes and edges, more than the {cap:,} that can be laid out "
              "here. Draw it for fewer variables, or leave long chains collapsed.",
        "zh": "它有 {count:,} 个节点和边，超过了这里能排版的 {cap:,} 个。请少选几个变量来画，"
              "或保持长链折叠。",
    },
    "layout_too_tangled": {
        "en": "its {edges:,} edges between {nodes:,} nodes (crossing {crossings:,} ranks) are "
              "too many or too long to lay out here. Draw it for fewer variables.",
        "zh": "它在 {nodes:,} 个节点之间有 {edges:,} 条边（跨越 {crossings:,} 层），太多或太长，"
              "这里无法排版。请少选几个变量来画。",
    },
    "cause_hidden": {"en": "the details are in the server's log",
                     "zh": "详细原因记录在服务器日志中"},
    "hosted_note": {
        "en": "A public demo with smaller limits: each run gets {time:g} s and {memory} MiB, "
              "one run at a time for all visitors; {burst} runs in a row, then one every "
              "{interval:g} s. Run it on your own machine for more.",
        "zh": "这是限制更严的公开演示：每次运行限时 {time:g} 秒、内存 {memory} MiB，"
              "所有访客的程序依次运行；连续运行 {burst} 次之后，每 {interval:g} 秒一次。"
              "在自己的电脑上运行可以放宽这些限制。",
    },
    "graph_help": {
        "en": "Drag to pan, scroll to zoom, double-click to fit. Hover over a node for details.",
        "zh": "拖动可平移，滚轮可缩放，双击复原。鼠标悬停在节点上可查看详情。",
    },
    "download_svg": {"en": "Download SVG", "zh": "下载 SVG"},
    "download_dot": {"en": "Download DOT", "zh": "下载 DOT"},
    "download_png": {"en": "Download PNG", "zh": "下载 PNG"},
    "download_json": {"en": "Download Trace (JSON)", "zh": "下载 Trace (JSON)"},
    "node_details": {"en": "Node details", "zh": "节点详情"},
    "backward_page": {"en": "Backward pass", "zh": "反向传播"},
    "backward_intro": {
        "en": "The backward pass the engine really ran, replayed: the order it ran the nodes "
              "in, the gradient each received and sent along each edge, and every .grad it "
              "wrote. Press play, or step through it below.",
        "zh": "重放引擎真正执行的反向传播：节点的执行顺序、每个节点收到的梯度和沿每条边传出的梯度，"
              "以及写入的每个 .grad。点击播放，或在下方逐步查看。",
    },
    "no_backward": {
        "en": "This program never calls backward() or torch.autograd.grad(), so there is no "
              "backward pass to show. Try adding `out.backward()`.",
        "zh": "这段程序没有调用 backward() 或 torch.autograd.grad()，所以没有反向传播可展示。"
              "试试加上 `out.backward()`。",
    },
    "backward_nothing": {
        "en": "This call ran no node (it failed before the engine started, see the error).",
        "zh": "这次调用没有运行任何节点（引擎开始之前就出错了，见上方错误）。",
    },
    "backward_call": {"en": "Backward call", "zh": "反向传播调用"},
    "no_such_call": {"en": "There is no backward call #{call} (recorded: {calls}).",
                     "zh": "没有第 #{call} 次反向传播调用（已记录：{calls}）。"},
    "download_animation": {"en": "Download animation (HTML)", "zh": "下载动画 (HTML)"},
    "export_title": {"en": "Backward pass of {root} (call #{call})",
                     "zh": "{root} 的反向传播（第 #{call} 次调用）"},
    "export_caption": {
        "en": "{steps} engine steps, recorded on {device} by Autograd Explorer. Press ▶ Play, "
              "or drag the slider.",
        "zh": "Autograd 探索器在 {device} 上记录的 {steps} 个引擎步骤。点击 ▶ Play 播放，"
              "或拖动滑块。",
    },
    "batched": {
        "en": "{steps:,} engine steps are shown in {frames} frames (several steps per frame).",
        "zh": "{steps:,} 个引擎步骤分成 {frames} 帧显示（每帧包含多个步骤）。",
    },
    "animation_help": {
        "en": "Orange outline: the node running. Green dot: done. Orange edges: gradient sent "
              "so far (wider = larger). Red numbers: the gradient each edge carried (one "
              "number when all its values are equal), sums where edges meet, and each leaf's "
              ".grad. Gold star: a leaf's .grad was written. Hover a node for its values.",
        "zh": "橙色框：正在运行的节点。绿点：已完成。橙色边：已传出的梯度（越粗越大）。"
              "红色数字：每条边传递的梯度（所有值相同时只写一个数）、多条边汇合处的求和，"
              "以及叶子张量的 .grad。金色星：叶子张量的 .grad 已写入。鼠标悬停可查看数值。",
    },
    "numbers_on_picture": {"en": "Numbers on the picture", "zh": "在图上显示数值"},
    "made_on_line": {"en": "made on line", "zh": "创建于第几行"},
    "engine_steps": {"en": "Step by step", "zh": "逐步查看"},
    "on_device": {"en": "ran on {device}", "zh": "在 {device} 上运行"},
    "received": {"en": "Received (grad_outputs)", "zh": "收到的梯度 (grad_outputs)"},
    "sent": {"en": "Sent to its inputs (grad_inputs)", "zh": "传给输入的梯度 (grad_inputs)"},
    "sent_nothing": {"en": "Nothing further: this is where the gradient stops.",
                     "zh": "没有继续传递：梯度在这里停下。"},
    "leaf_grads": {"en": ".grad of the leaves so far", "zh": "目前叶子张量的 .grad"},
    "vjp_title": {"en": "Vector–Jacobian product", "zh": "向量-雅可比积"},
    "vjp_explain": {
        "en": "y is a vector, so backward needs a vector v of the same shape. The engine never "
              "builds the Jacobian J = ∂y/∂x: it computes vᵀJ directly, node by node (the steps "
              "above), and adds it to each leaf's .grad. J itself is not shown: "
              "building it would take one more backward pass per element of y, and your "
              "program's hooks would see every one.",
        "zh": "y 是向量，所以 backward 需要一个同形状的向量 v。引擎从不构造雅可比矩阵 "
              "J = ∂y/∂x：它逐个节点直接计算 vᵀJ（即上面的各步），并把结果加到每个叶子的 .grad 上。"
              "这里不列出 J 本身：构造它需要对 y 的每个元素再做一次反向传播，而你程序里的 "
              "hook 会看到每一次。",
    },
    "vjp_result": {"en": "vᵀJ, added to {leaf}.grad", "zh": "vᵀJ（加到 {leaf}.grad 上）"},
    # ---- devices page (pages/4_Devices.py, explorer/devices.py) ----
    "devices_page": {"en": "Devices", "zh": "设备"},
    "devices_intro": {
        "en": "Where a program runs: on the CPU, or on a CUDA GPU where this machine has one "
              "(choose in the sidebar). Everything below was asked of PyTorch by small programs "
              "run in a worker, just like yours.",
        "zh": "程序在哪里运行：CPU，或者这台机器上的 CUDA GPU（在侧边栏中选择）。下面的一切都是"
              "由在独立进程中运行的小程序向 PyTorch 询问得到的，和你的程序一样。",
    },
    "devices_no_gpu": {
        "en": "**No GPU on this machine.** {reason} The GPU rows below stay empty, the chart has "
              "CPU lines only, and a program that asks for `cuda` stops with an explanation. "
              'Write `device = "cuda" if torch.cuda.is_available() else "cpu"` and the same '
              "program runs with or without a GPU.",
        "zh": "**这台机器没有 GPU。** {reason}下面与 GPU 有关的行为空，图中只有 CPU 的曲线；"
              "请求 `cuda` 的程序会停下并给出解释。写成 "
              '`device = "cuda" if torch.cuda.is_available() else "cpu"`，同一个程序有没有 GPU '
              "都能运行。",
    },
    "devices_reason_build": {
        "en": "This PyTorch is a CPU-only build (`torch.version.cuda` is None).",
        "zh": "这里的 PyTorch 是只支持 CPU 的版本（`torch.version.cuda` 为 None）。",
    },
    "devices_reason_driver": {
        "en": "PyTorch was built with CUDA {cuda} but finds no usable NVIDIA GPU or driver.",
        "zh": "PyTorch 编译时使用了 CUDA {cuda}，但找不到可用的 NVIDIA GPU 或驱动。",
    },
    "devices_gpu_note": {
        "en": "GPU rows and GPU lines describe {device}.",
        "zh": "与 GPU 有关的行和曲线描述的是 {device}。",
    },
    "devices_machine": {"en": "This machine", "zh": "这台机器"},
    "devices_col_call": {"en": "call", "zh": "调用"},
    "devices_col_what": {"en": "what it tells", "zh": "说明"},
    "devices_col_value": {"en": "on this machine", "zh": "本机的值"},
    "devices_no_gpu_value": {"en": "— (no GPU)", "zh": "—（没有 GPU）"},
    "devices_probing": {"en": "Asking PyTorch in a worker…", "zh": "正在独立进程中询问 PyTorch……"},
    "devices_probe_code": {"en": "The program that asked", "zh": "提问的程序"},
    "devices_seed_title": {"en": "Reproducible runs", "zh": "可重复的运行"},
    "devices_seed_text": {
        "en": "The explorer starts every run with `torch.manual_seed(0)` (and seeds NumPy and "
              "`random` with 0), so a program draws the same random numbers each time it runs. "
              "`torch.manual_seed` seeds the CPU and every GPU; `torch.cuda.manual_seed_all` "
              "seeds the GPUs only and does nothing where there are none.",
        "zh": "探索器在每次运行开始时调用 `torch.manual_seed(0)`（NumPy 和 `random` 的种子也设为 "
              "0），所以程序每次运行得到的随机数都相同。`torch.manual_seed` 为 CPU 和所有 GPU "
              "设置种子；`torch.cuda.manual_seed_all` 只为 GPU 设置，没有 GPU 时什么也不做。",
    },
    "devices_seed_col_draw": {"en": "torch.rand(3)", "zh": "torch.rand(3)"},
    "devices_seed_col_values": {"en": "values", "zh": "数值"},
    "devices_seed_run1": {"en": "run 1, no seed in the program",
                          "zh": "第 1 次运行，程序中没有设种子"},
    "devices_seed_run2": {"en": "run 2, the same program", "zh": "第 2 次运行，同一个程序"},
    "devices_seed_again": {"en": "run 1, after torch.manual_seed(0)",
                           "zh": "第 1 次运行，torch.manual_seed(0) 之后"},
    "devices_timing_title": {"en": "What moving data costs", "zh": "搬运数据的代价"},
    "devices_timing_text": {
        "en": "`x.to(device)` copies a tensor into that device's memory (and returns `x` itself "
              "when it is already there); an operation needs all its tensors on one device. "
              "The chart times `a @ b` for n × n matrices, and the copies `.to()` makes.",
        "zh": "`x.to(device)` 把张量复制到该设备的内存中（已在该设备上时直接返回 `x` 本身）；"
              "一个运算要求所有张量都在同一设备上。图中是 n × n 矩阵的 `a @ b` 以及 `.to()` "
              "复制所用的时间。",
    },
    "devices_timing_running": {"en": "Timing matrix products in a worker…",
                               "zh": "正在独立进程中计时矩阵乘法……"},
    "devices_measure_again": {"en": "Measure again", "zh": "重新测量"},
    "devices_timing_code": {"en": "The timing program", "zh": "计时程序"},
    "devices_axis_size": {"en": "matrix size n (n × n, float32)",
                          "zh": "矩阵大小 n（n × n，float32）"},
    "devices_axis_ms": {"en": "milliseconds (best of 5)", "zh": "毫秒（5 次中最快）"},
    # ---- NumPy page (pages/3_NumPy.py) ----
    "numpy_page": {"en": "Tensor ↔ NumPy", "zh": "Tensor ↔ NumPy"},
    "numpy_intro": {
        "en": "A tensor and a NumPy array side by side after every statement: do they share "
              "memory, and what did this step change on each side?",
        "zh": "每条语句之后，张量和 NumPy 数组并排显示：它们是否共享内存？"
              "这一步分别改变了哪些元素？",
    },
    "numpy_lesson": {"en": "Lesson: tensors and NumPy", "zh": "小课：张量与 NumPy"},
    "numpy_left": {"en": "Compare", "zh": "比较"},
    "numpy_right": {"en": "with", "zh": "与"},
    "numpy_shares": {"en": "shares memory", "zh": "共享内存"},
    "numpy_copy": {"en": "separate copy", "zh": "独立副本"},
    "numpy_shares_why": {
        "en": "both hold the {n} bytes from `{start}`: a write through one is seen by the other.",
        "zh": "两者都占用从 `{start}` 开始的 {n} 个字节：通过一个写入，另一个也能看到。",
    },
    "numpy_copy_why": {
        "en": "their elements live at different addresses: changing one leaves the other alone.",
        "zh": "它们的元素位于不同的地址：改变一个不会影响另一个。",
    },
    "numpy_devices": {
        "en": "{left} is on {a} and {right} on {b}: memory on different devices is never "
              "shared (NumPy arrays live in CPU memory).",
        "zh": "{left} 在 {a} 上，{right} 在 {b} 上：不同设备上的内存从不共享"
              "（NumPy 数组总在 CPU 内存中）。",
    },
    "numpy_address": {
        "en": "memory `{start}` + {n} B",
        "zh": "内存 `{start}` + {n} 字节",
    },
    "numpy_pick": {"en": "Pick a variable to compare.", "zh": "请选择要比较的变量。"},
    "numpy_missing": {"en": "Not defined at this step.", "zh": "这一步还没有定义。"},
    "numpy_not_array": {
        "en": "A {kind} at this step, not a tensor or an array.",
        "zh": "这一步它是 {kind}，不是张量或数组。",
    },
    "numpy_empty": {"en": "Empty: no elements.", "zh": "空的：没有元素。"},
    "numpy_changed": {
        "en": "Outlined cells changed in this step.",
        "zh": "带框的元素在这一步发生了变化。",
    },
    "numpy_no_arrays": {
        "en": "This program has no tensors or NumPy arrays to compare.",
        "zh": "这段程序没有可以比较的张量或 NumPy 数组。",
    },
}


def text(key: str, lang: str, **values: object) -> str:
    """The interface string `key` in `lang` (English if missing), formatted with `values`."""
    entry = TEXT[key]
    return entry.get(lang, entry["en"]).format(**values)
