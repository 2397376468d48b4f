"""The devices page's logic: small programs that ask PyTorch about this machine, and what
they found as table rows and a plotly figure. Pure: no Streamlit, no PyTorch.

Every value comes from a run in a worker, like a learner's program (the server never imports
PyTorch). `PROBE` asks the questions of the seed's GPU table (note 002) and a few about the
CPU; run twice, it also shows that seeded runs repeat. `TIMING` times one matrix product on
the CPU and, where the run has a GPU, on the GPU, with the cost of moving data there and back
with `.to()`. Both use only what the sandbox allows a learner, so the CPU's capability
(`torch.backends.cpu.get_cpu_capability()`, and `torch.backends` is blocked) is left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import plotly.graph_objects as go

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.safety.limits import Limits
from explorer.trace import Trace, value_of
from explorer.trace.schema import Variable
from explorer.views.numbers import written

Runner = Callable[..., Trace]  # `WorkerPool.run`: (code, *, device=...) -> Trace

# A run on "cuda" fails with DeviceUnavailable where there is no GPU. A CPU run would not do:
# its address-space cap breaks the CUDA driver, so it could not see the GPUs there are.
COUNT = "count = torch.cuda.device_count()\n"
MAX_GPUS = 64  # devices one machine may list (the count comes from a run: untrusted)

PROBE = """\
import torch

version = torch.__version__
cuda_build = torch.version.cuda            # None for a CPU-only build of PyTorch
threads = torch.get_num_threads()
device = torch.device("cuda")              # only a name: making it needs no GPU
available = torch.cuda.is_available()
count = torch.cuda.device_count()
if available:
    gpu = torch.get_default_device()       # the GPU this run was given
    current = torch.cuda.current_device()
    capability = torch.cuda.get_device_capability(gpu)
    name = torch.cuda.get_device_name(gpu)
    total = torch.cuda.get_device_properties(gpu).total_memory
    x = torch.ones(1024, 1024, device=gpu)  # 4 MiB of float32
    allocated = torch.cuda.memory_allocated(gpu)
    reserved = torch.cuda.memory_reserved(gpu)
    del x
cleared = torch.cuda.empty_cache()         # safe to call on a machine without a GPU
if available:
    reserved_after = torch.cuda.memory_reserved(gpu)
first = torch.rand(3)                      # no seed here: the explorer seeded this run with 0
torch.manual_seed(0)                       # seeds the CPU and every GPU
torch.cuda.manual_seed(0)                  # the current GPU only; nothing to do without one
torch.cuda.manual_seed_all(0)              # every GPU
seeded = torch.rand(3)
"""

SIZES = (64, 128, 256, 512, 1024)
TIMING = f"""\
import math
import time
import numpy as np
import torch

sizes = {list(SIZES)}
gpu = torch.get_default_device()    # the device this run was given: cpu or cuda:N
on_gpu = gpu.type == "cuda"


def wait():
    # GPU work is queued and runs later: wait for it to finish before reading the clock
    if on_gpu:
        torch.cuda.synchronize(gpu)


def best_ms(work):
    # the fastest of five tries, in milliseconds
    best = math.inf
    for _ in range(5):
        wait()
        start = time.perf_counter()
        work()
        wait()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def measure(n):
    a = torch.rand(n, n, device="cpu")
    b = torch.rand(n, n, device="cpu")
    cpu_matmul.append(best_ms(lambda: a @ b))
    cpu_to_double.append(best_ms(lambda: a.to("cpu", torch.double)))  # a copy, same device
    if on_gpu:
        to_gpu.append(best_ms(lambda: a.to(gpu)))    # CPU memory -> GPU memory
        ga, gb = a.to(gpu), b.to(gpu)
        gpu_matmul.append(best_ms(lambda: ga @ gb))
        c = ga @ gb
        to_cpu.append(best_ms(lambda: c.to("cpu")))  # GPU memory -> CPU memory


cpu_matmul, cpu_to_double, to_gpu, gpu_matmul, to_cpu = [], [], [], [], []
began = time.perf_counter()
for n in sizes:
    if time.perf_counter() - began > 2:
        break                       # stay well inside the time a run may take
    measure(n)
measured = np.array(sizes[:len(cpu_matmul)])
cpu_matmul, cpu_to_double = np.array(cpu_matmul), np.array(cpu_to_double)
to_gpu, gpu_matmul, to_cpu = np.array(to_gpu), np.array(gpu_matmul), np.array(to_cpu)
"""


@dataclass(frozen=True)
class Row:
    """One row of the devices table: a call and the probe's variable for it (what the call
    tells is the text `devices_row_<name>`)."""

    api: str
    name: str
    size: bool = False  # the value is a number of bytes


ROWS = (
    Row("torch.__version__", "version"),
    Row("torch.version.cuda", "cuda_build"),
    Row("torch.get_num_threads()", "threads"),
    Row("device = torch.device('cuda')", "device"),
    Row("torch.cuda.is_available()", "available"),
    Row("torch.cuda.device_count()", "count"),
    Row("torch.cuda.current_device()", "current"),
    Row("torch.cuda.get_device_capability(device)", "capability"),
    Row("torch.cuda.get_device_name(device)", "name"),
    Row("torch.cuda.get_device_properties(device)", "total", size=True),
    Row("torch.cuda.memory_allocated(device)", "allocated", size=True),
    Row("torch.cuda.memory_reserved(device)", "reserved", size=True),
    Row("torch.cuda.empty_cache()", "cleared"),
    Row("torch.cuda.memory_reserved(device)", "reserved_after", size=True),
)
CALLS = re.compile(r"(?<=\)) (?=torch\.)")  # between two calls in a row's `api`
SEED_ROW = Row("torch.cuda.manual_seed(seed) torch.cuda.manual_seed_all(seed)", "seeded")


@dataclass(frozen=True)
class Series:
    """One line of the timing chart: milliseconds per matrix size n."""

    key: str  # the timing program's variable
    sizes: list[int]
    ms: list[float]


# The timing program's variables, in legend order: colour, dash (the label is the text
# `devices_series_<variable>`).
SERIES = {
    "cpu_matmul": ("#1f77b4", "solid"),
    "cpu_to_double": ("#9ecae1", "dash"),
    "gpu_matmul": ("#2ca02c", "solid"),
    "to_gpu": ("#ff7f0e", "dash"),
    "to_cpu": ("#d62728", "dot"),
}


def cuda_devices(run: Runner) -> list[str]:
    """This machine's CUDA devices (`cuda:0`…), asked of a worker; none without a GPU."""
    trace = run(COUNT, device="cuda")
    count = value_of(trace.variables, "count", 0) if trace.ok else 0
    return [f"cuda:{index}" for index in range(min(count, MAX_GPUS) if type(count) is int else 0)]


def measuring_device(chosen: str, gpus: list[str]) -> str:
    """Where the page measures: the GPU chosen in the sidebar, else the first GPU, else CPU."""
    if chosen.startswith("cuda"):
        return chosen
    return gpus[0] if gpus else "cpu"


def probe(run: Runner, device: str) -> tuple[Trace, Trace]:
    """Two runs of `PROBE` on `device`: the first fills the table, both show the seeding."""
    return run(PROBE, device=device), run(PROBE, device=device)


def measure(run: Runner, device: str, limits: Limits) -> Trace:
    """`TIMING` run on `device`, its lines not stepped: a line recorded inside the loop would
    be timed with the work (a 64 × 64 product read 0.8 ms, not 0.02)."""
    return run(TIMING, device=device, limits=replace(limits, line_steps=0))


def machine_rows(first: Trace, second: Trace, lang: str) -> list[dict[str, str]]:
    """The devices table: call, what it tells (in `lang`) and its value on this machine."""
    names = (text("devices_col_call", lang), text("devices_col_what", lang),
             text("devices_col_value", lang))
    missing = text("devices_no_gpu_value", lang)
    rows = []
    for row in ROWS:
        shown = _shown(first.variables.get(row.name), row.size)
        rows.append(_row(names, row, lang, missing if shown is None else code_span(shown)))
    # Without a GPU, torch.rand(3) draws on the CPU: the row would tell of the CPU's seed.
    same = same_random_numbers(first, second) if value_of(first.variables, "available") else None
    rows.append(_row(names, SEED_ROW, lang, missing if same is None else code_span(str(same))))
    return rows


def same_random_numbers(first: Trace, second: Trace) -> bool | None:
    """Did two runs of the probe draw the same seeded `torch.rand(3)`? None if one failed."""
    one, two = (value_of(t.variables, "seeded") for t in (first, second))
    return None if one is None or two is None else one == two


def seed_rows(first: Trace, second: Trace, lang: str) -> list[dict[str, str]]:
    """`torch.rand(3)` drawn with the explorer's seed in two runs, and after a manual seed."""
    label, value = text("devices_seed_col_draw", lang), text("devices_seed_col_values", lang)
    draws = (("devices_seed_run1", first, "first"), ("devices_seed_run2", second, "first"),
             ("devices_seed_again", first, "seeded"))
    return [{label: text(key, lang), value: code_span(_tensor_text(trace.variables.get(name)))}
            for key, trace, name in draws]


def no_gpu_reason(first: Trace, lang: str) -> str | None:
    """Why this machine has no usable GPU, from what the probe found; None if it has one."""
    variables = first.variables
    if value_of(variables, "available"):
        return None
    build = value_of(variables, "cuda_build")
    if build in (None, "None"):
        return text("devices_reason_build", lang)
    return text("devices_reason_driver", lang, cuda=code_span(str(build)))


def timing_series(trace: Trace) -> list[Series]:
    """The timing program's measured lines, in legend order; series it did not measure are
    left out (the GPU ones where the run had no GPU)."""
    variables = trace.variables
    sizes = [int(n) for n in value_of(variables, "measured", [])]
    series = []
    for key in SERIES:
        ms = value_of(variables, key)
        if isinstance(ms, list) and ms and len(ms) == len(sizes):
            series.append(Series(key, sizes, [float(v) for v in ms]))
    return series


def timing_figure(series: list[Series], lang: str) -> go.Figure:
    """Milliseconds against matrix size, both on log axes, one line per series."""
    figure = go.Figure()
    for line in series:
        colour, dash = SERIES[line.key]
        label = text(f"devices_series_{line.key}", lang)
        figure.add_scatter(x=line.sizes, y=line.ms, name=label, mode="lines+markers",
                           line={"color": colour, "dash": dash, "width": 2},
                           hovertemplate="n = %{x}: %{y:.3f} ms<extra>" + label + "</extra>")
    sizes = sorted({n for line in series for n in line.sizes})
    figure.update_xaxes(type="log", tickvals=sizes, ticktext=[str(n) for n in sizes],
                        title_text=text("devices_axis_size", lang))
    figure.update_yaxes(type="log", dtick=1, title_text=text("devices_axis_ms", lang))
    figure.update_layout(height=400, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                         legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return figure


def _row(names: tuple[str, str, str], row: Row, lang: str, value: str) -> dict[str, str]:
    calls = " ".join(code_span(call) for call in CALLS.split(row.api))
    return {names[0]: calls, names[1]: text(f"devices_row_{row.name}", lang),
            names[2]: value}


def _shown(info: Variable | None, size: bool) -> str | None:
    """A probe variable as the table shows it; None when the probe did not set it."""
    if info is None:
        return None
    value = info.values
    if size and isinstance(value, int):
        return _bytes(value)
    return str(value)


def _bytes(count: int) -> str:
    if count >= 2**30:
        return f"{count / 2**30:.1f} GiB"
    return f"{count / 2**20:.1f} MiB" if count else "0"


def _tensor_text(info: Variable | None) -> str:
    """A small tensor as PyTorch prints it: `tensor([0.4963, 0.7682])`."""
    if info is None or not isinstance(info.values, list):
        return "—"
    return f"tensor({written(info.values)})"

