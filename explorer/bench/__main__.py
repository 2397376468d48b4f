"""How fast the explorer is, measured against bare torchviz: `python -m explorer.bench`.

In one process and one run (the machine is noisy, so results are ratios and medians):

1. the pipeline for a chain of N `y = y * 1.001` ops with a final backward — run in a real
   WorkerPool (with scale limits, see SCALE_LIMITS), Trace, view, graphviz layout, animation
   figure and its JSON — against torchviz's `make_dot(...).pipe("svg")` on the same graph
   built here in torch, for graphs of ~20 to ~10,000 nodes; and the explorer's own drawing
   of that torch graph (explorer.runner.graph + view + dot) against torchviz's;
2. warm end-to-end latency of every seed program (`explorer.content.examples.EXAMPLES`), p50/p95,
   the first run's cost (the zygote importing PyTorch) apart, and the program's own time in
   plain PyTorch;
3. the animation figure's JSON size, collapsed (the page's default) and uncollapsed;
4. RSS of the zygote and of this process before and after many runs;
5. where the time goes: a worker run split into the child's execute() and the rest, and
   the same chains executed in this process, stage by stage;
6. the operating-system wall's cost: the same programs through a walled pool (box + lock)
   and a bare one (neither), interleaved, median per run;
7. famous lessons at their published sizes (explorer.bench.lessons): time and record size;

then PASS/MISS for each target. `--quick` uses tiny sizes and few runs (tests/test_bench.py).
`--browser` instead times, in Debian's Chromium, Run → graph visible on the Graph page, and
Run → replay picture on the Backward page (a tab's first run and its later ones);
`--classroom` plays a class of learners over Streamlit's websocket (explorer.bench.classroom).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, redirect_stdout, suppress
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from unittest import mock

import plotly.io as pio

from explorer.bench.classroom import classroom
from explorer.bench.lessons import Lesson, fits, measure_lessons
from explorer.bench.served import CHROMIUM, CHROMIUM_ARGS, app, checkout
from explorer.content.examples import EXAMPLES, by_key
from explorer.runner.graph_view import view
from explorer.runner.trace import Trace
from explorer.runner.wire import MAX_RESULT_BYTES
from explorer.runner.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.views.animation import figure, frames_of
from explorer.views.render import TooLarge, positions, svg

# PyTorch is imported only once the worker runs are measured, so that this process is, like
# the app's server, without it while it drives the pool.

SCALE_LIMITS = Limits(time_s=60, graph_nodes=100_000)  # the app's: 5 s, 20,000 nodes
FULL_OPS = (10, 100, 1_000, 5_000)  # a chain of n ops has 2n + 5 nodes at its backward call
QUICK_OPS = (10, 50)
POOL_SIZE = 2  # the app's: each run gets os.cpu_count() // 2 threads
SEED_BUDGET_S = 15.0  # a seed program slower than this is run fewer times (at least 5)
SEED_TARGET_MS = 100.0
RATIO_TARGET = 1.5
RATIO_UP_TO_NODES = 2_500  # "up to ~2,000 nodes": every size but the ~10,000-node one
BIG_TARGET_S = 5.0
BIG_FIGURE_MB = 10.0
REPLAY_TARGET_MS = 500.0  # a tab's first replay of the seed program, in the browser
GROWTH_MIB = 5.0  # RSS growth over all runs still counted as noise
LOOP_TARGET = 2.0  # a seed training loop, end to end, against its time in plain PyTorch
LOOP_CALLS = 100  # backward calls that make a seed program a training loop


def chain(ops: int, then_backward: bool = True) -> str:
    """A program whose graph is a chain of `ops` multiplications."""
    code = (f"x = torch.ones(1, requires_grad=True)\ny = x\nfor i in range({ops}):\n"
            "    y = y * 1.001\nloss = y.sum()\n")
    return code + ("loss.backward()\n" if then_backward else "")


@dataclass
class Served:
    """What the server does for one program, in seconds: run it in a worker (fork, run,
    Trace as JSON, parse), then the Backward page's view, layout (one `dot` run for
    positions and SVG) and figure at the engine's first step (built, then serialised as
    st.plotly_chart does) — or, without a backward call, the Graph page's view and SVG. Apart
    from the page: the animation the page offers as a download, its seconds and bytes."""

    run: float
    view: float = 0.0
    layout: float = 0.0
    figure: float = 0.0
    in_child: float = 0.0  # of `run`: the worker's own execute() (Trace.elapsed_ms)
    nodes: int = 0  # of the graph drawn: at the backward call, else after the last step
    steps: int = 0  # engine steps of the backward call animated
    calls: int = 0  # backward calls the program made
    animation: float = 0.0
    animation_bytes: int = 0
    error: str | None = None

    @property
    def total(self) -> float:
        return self.run + self.view + self.layout + self.figure


def serve(pool: WorkerPool, code: str, limits: Limits | None = None,
          collapse: bool = True) -> Served:
    """Run `code` and make what its pages show, timing each stage."""
    started = time.perf_counter()
    trace = pool.run(code, limits=limits)
    served = Served(run=time.perf_counter() - started, in_child=trace.elapsed_ms / 1000,
                    error=trace.error["type"] if trace.error else None,
                    calls=len(trace.losses))
    calls = [c for c in trace.backward if "graph" in c and c["steps"]]
    graph = trace.graphs[calls[-1]["graph"]] if calls else trace.graph
    if graph is None or not graph.get("dot"):
        return served
    served.nodes = len(graph["nodes"])
    t = time.perf_counter()
    if not calls:
        shown = view(graph, collapse=collapse)
        served.view = time.perf_counter() - t
        t = time.perf_counter()
        svg(shown.dot)
        served.layout = time.perf_counter() - t
        return served
    call = calls[-1]
    shown = view(graph, call["roots"], show_saved=False, show_attrs=False, collapse=collapse)
    served.view = time.perf_counter() - t
    t = time.perf_counter()
    layout, picture = positions(shown.dot, timeout_s=120), svg(shown.dot, timeout_s=120)
    served.layout = time.perf_counter() - t
    t = time.perf_counter()
    pio.to_json(figure(call, layout, picture, shown.groups, at=0, animated=False).to_dict(),
                validate=False)  # what st.plotly_chart sends
    served.figure = time.perf_counter() - t
    t = time.perf_counter()
    spec = pio.to_json(figure(call, layout, picture, shown.groups, at=0).to_dict(),
                       validate=False)
    served.animation = time.perf_counter() - t
    served.steps, served.animation_bytes = len(call["steps"]), len(spec.encode())
    return served


def _torch_chain(ops: int) -> dict[str, Any]:
    """The chain's variables at its backward call, built here in torch."""
    import torch

    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(ops):
        y = y * 1.001
    return {"x": x, "y": y, "loss": y.sum()}


def torchviz(ops: int) -> tuple[float, int]:
    """Seconds for torchviz's make_dot + .pipe('svg') on the chain, and its node count.
    RecursionError (make_dot recurses once per graph level) propagates."""
    from torchviz import make_dot

    roots = _torch_chain(ops)
    started = time.perf_counter()
    dot = make_dot(tuple(roots.values()), params=roots, show_attrs=True, show_saved=True)
    dot.pipe("svg")
    return time.perf_counter() - started, sum("->" not in line for line in dot.body)


def deep(work: Callable[[], Any], depth: int) -> Any:
    """`work()` in a thread with a 512 MiB stack and a recursion limit above `depth`."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = work()
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            out["error"] = error

    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(limit, depth))
    threading.stack_size(512 << 20)
    try:
        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(stack)
        sys.setrecursionlimit(limit)
    if "error" in out:
        raise out["error"]
    return out["value"]


def explorer_drawing(ops: int) -> float | None:
    """Seconds for the explorer's drawing of the chain built here — explorer.runner.graph.record,
    the uncollapsed view and its SVG: the picture torchviz draws, plus hover tooltips. None
    where the app refuses to lay out that many nodes (explorer.views.render.MAX_STATEMENTS)."""
    from explorer.runner.graph import Ids, record

    roots = _torch_chain(ops)
    started = time.perf_counter()
    graph = record(roots, Ids(), SCALE_LIMITS.graph_nodes)
    assert graph is not None
    try:
        svg(view(graph, collapse=False).dot, timeout_s=600)
    except TooLarge:
        return None
    return time.perf_counter() - started


@dataclass
class Scale:
    """One chain size: the pipeline and the explorer's drawing against torchviz, and the
    uncollapsed figure."""

    ops: int
    served: Served
    torchviz_s: float | None  # None: RecursionError at Python's default recursion limit
    raised_s: float  # torchviz with the recursion limit raised
    torchviz_nodes: int
    drawing_s: float | None  # None: more than the app lays out uncollapsed
    flat: Served | None = None  # uncollapsed; None where it failed
    flat_error: str = ""

    @property
    def baseline(self) -> float:
        return self.torchviz_s if self.torchviz_s is not None else self.raised_s

    @property
    def ratio(self) -> float:
        return self.served.total / self.baseline


def measure_scale(pool: WorkerPool, ops: int, repeats: int, baselines: int) -> Scale:
    """Medians of `repeats` pipeline runs and of `baselines` runs of torchviz and of the
    explorer's drawing, interleaved."""
    served: list[Served] = []
    plain: list[float | None] = []
    raised: list[float] = []
    drawing: list[float | None] = []
    nodes = 0
    for i in range(max(repeats, baselines)):
        if i < repeats:
            served.append(serve(pool, chain(ops), SCALE_LIMITS))
        if i < baselines:
            try:
                plain.append(torchviz(ops)[0])
            except RecursionError:
                plain.append(None)
            seconds, nodes = deep(lambda: torchviz(ops), 10 * ops + 1_000)
            raised.append(seconds)
            drawing.append(explorer_drawing(ops))
    ok = [s for s in plain if s is not None]
    drawn = [s for s in drawing if s is not None]
    result = Scale(ops, _median_served(served), statistics.median(ok) if ok else None,
                   statistics.median(raised), nodes,
                   statistics.median(drawn) if drawn else None)
    try:
        result.flat = serve(pool, chain(ops), SCALE_LIMITS, collapse=False)
    except Exception as error:  # noqa: BLE001 - e.g. graphviz's time limit: report it
        result.flat_error = type(error).__name__
    return result


def _median_served(runs: list[Served]) -> Served:
    """Each stage's median (the total is then the sum of medians)."""
    def median(stage: str) -> float:
        return statistics.median(getattr(r, stage) for r in runs)

    first = runs[0]
    return Served(median("run"), median("view"), median("layout"), median("figure"),
                  median("in_child"), first.nodes, first.steps, first.calls, median("animation"),
                  first.animation_bytes, first.error)


@dataclass
class Seed:
    """Warm end-to-end times of one seed program, and its time in plain PyTorch (seconds)."""

    key: str
    runs: list[Served]
    error: str | None
    bare: float = 0.0

    @property
    def times(self) -> list[float]:
        return [r.total for r in self.runs]

    def pct(self, q: int) -> float:
        """The q-th percentile (nearest rank)."""
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def measure_seeds(pool: WorkerPool, runs: int) -> list[Seed]:
    """`runs` runs of each seed program, fewer (at least 5) past SEED_BUDGET_S."""
    seeds = []
    for example in EXAMPLES:
        done: list[Served] = []
        started = time.perf_counter()
        while len(done) < runs and (len(done) < 5 or time.perf_counter() - started
                                    < SEED_BUDGET_S):
            done.append(serve(pool, example.code))
        seeds.append(Seed(example.key, done, done[0].error))
    return seeds


def bare_time(code: str, runs: int) -> float:
    """Median seconds of `code` run by plain `exec` in this process, after one run that is not
    timed (first calls import more of PyTorch): no sandbox, worker or recording. Its output
    and warnings are dropped; an error (some lessons end in one) ends it."""
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        with (open(os.devnull, "w") as sink, redirect_stdout(sink), warnings.catch_warnings(),
              suppress(Exception)):
            warnings.simplefilter("ignore")
            exec(compile(code, "<seed>", "exec"), {"__name__": "__seed__"})  # noqa: S102
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


@dataclass
class Memory:
    """RSS (MiB) of the zygote and of this process after warm-up and after `runs` runs."""

    runs: int
    zygote: tuple[float, float]
    parent: tuple[float, float]


def measure_memory(pool: WorkerPool, runs: int) -> Memory:
    code = by_key("autograd-basics").code
    zygote = _zygote_pid()
    before = _rss(zygote), _parent_rss()
    for _ in range(runs):
        pool.run(code)
    after = _rss(zygote), _parent_rss()
    return Memory(runs, (before[0], after[0]), (before[1], after[1]))


def _zygote_pid() -> int:
    """The zygote: this process's child (or, in the box, grandchild) running
    explorer.runner.zygote."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if b"explorer.runner.zygote" in cmdline and not cmdline.startswith(b"bwrap") and (
                parent == os.getpid() or _parent(parent) == os.getpid()):  # in the box or not
            return int(entry.name)
    raise RuntimeError("no zygote process found")


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def _rss(pid: int | str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def _parent_rss() -> float:
    gc.collect()
    return _rss("self")


@dataclass
class Stages:
    """The chain executed in this process (no fork, no worker process), stage by stage."""

    ops: int
    execute: float
    graphs: float  # recording graphs after each statement ...
    graph_calls: float
    at_backward: float  # ... and when backward is called, both inside `execute`
    hooks: float  # hooking every node of the pass
    to_json: float
    parse: float
    megabytes: float


@contextmanager
def _timing(target: Any, name: str, into: list[float]) -> Iterator[None]:
    """Add the time of every call of `target.name` to `into`."""
    original = getattr(target, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            into.append(time.perf_counter() - started)

    with mock.patch.object(target, name, timed):
        yield


def measure_stages(ops: int, runs: int) -> Stages:
    """Each stage's median over `runs` runs, each after a full garbage collection."""
    done = []
    for _ in range(runs):
        gc.collect()
        done.append(_stages(ops))
    return Stages(ops, *(statistics.median(getattr(d, f.name) for d in done)
                         for f in fields(Stages)[1:]))


def _stages(ops: int) -> Stages:
    from explorer.runner import backward, execute

    per_step: list[float] = []
    at_backward: list[float] = []
    hooks: list[float] = []
    with (_timing(execute, "record_graph", per_step), _timing(backward, "record", at_backward),
          _timing(backward.Recorder, "_hook", hooks)):
        started = time.perf_counter()
        trace = execute.execute(chain(ops), limits=SCALE_LIMITS)
        ran = time.perf_counter() - started
    started = time.perf_counter()
    text = trace.to_json()
    dumped = time.perf_counter() - started
    started = time.perf_counter()
    Trace.from_json(text, SCALE_LIMITS)
    parsed = time.perf_counter() - started
    return Stages(ops, ran, sum(per_step), len(per_step), sum(at_backward), sum(hooks),
                  dumped, parsed, len(text.encode()) / 2**20)


@dataclass
class Report:
    """Everything one benchmark run measured."""

    quick: bool
    load: float = field(default_factory=lambda: os.getloadavg()[0])  # at the start
    threads: int = 1
    first_run: float = 0.0
    seeds: list[Seed] = field(default_factory=list)
    scales: list[Scale] = field(default_factory=list)
    memory: Memory | None = None
    stages: list[Stages] = field(default_factory=list)
    wall: dict[str, tuple[float, float]] = field(default_factory=dict)  # walled s, bare s
    lessons: list[Lesson] = field(default_factory=list)


def measure_wall(runs: int) -> dict[str, tuple[float, float]]:
    """Median seconds per run of a few programs, walled and bare, run turn about."""
    walled, bare = WorkerPool(size=1, kept_bytes=0), _bare_pool()
    programs = {"print(1)": "print(1)", "autograd-basics": by_key("autograd-basics").code}
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in programs}
    try:
        for pool in (walled, bare):
            pool.run("pass")
        for _ in range(runs):
            for key, code in programs.items():
                for pool, into in zip((walled, bare), times[key], strict=True):
                    started = time.perf_counter()
                    pool.run(code)
                    into.append(time.perf_counter() - started)
    finally:
        walled.close()
        bare.close()
    return {k: (statistics.median(w), statistics.median(b)) for k, (w, b) in times.items()}


def _bare_pool() -> WorkerPool:
    """A pool without the box and the lock: the path runs took before the wall."""
    with mock.patch("explorer.safety.box.missing", return_value="measured without"), \
            mock.patch("explorer.safety.confine.missing", return_value=["measured without"]):
        return WorkerPool(size=1, kept_bytes=0, require_walls=False)


def measure(quick: bool, progress: Callable[[str], None]) -> Report:
    """Run every measurement. The pool's runs of seed programs and for memory come first,
    while this process, like the app's server, has not imported PyTorch; the in-process
    stages come before the large graphs, whose garbage would slow them down."""
    report = Report(quick)
    sizes = QUICK_OPS if quick else FULL_OPS
    started = time.perf_counter()
    pool = WorkerPool(size=POOL_SIZE, kept_bytes=0)  # every run runs: what it costs
    report.threads = pool.threads
    try:
        pool.run(by_key("autograd-basics").code)
        report.first_run = time.perf_counter() - started
        progress("seed programs")
        report.seeds = measure_seeds(pool, 3 if quick else 30)
        progress("memory")
        report.memory = measure_memory(pool, 20 if quick else 1_000)
        import torch

        torch.set_num_threads(report.threads)  # as a worker of the pool runs
        for ops in sizes:
            progress(f"stages in this process, chain of {ops}")
            report.stages.append(measure_stages(ops, 1 if quick else 3))
        for ops in sizes:
            progress(f"pipeline, torchviz and the explorer's drawing, chain of {ops}")
            report.scales.append(measure_scale(pool, ops, 2 if quick else 3 if ops >= 1_000
                                               else 5, 1 if quick or ops >= 5_000 else 3))
        progress("famous lessons at full size")
        report.lessons = measure_lessons(pool, 1 if quick else 5)
    finally:
        pool.close()
    progress("the wall's cost")
    report.wall = measure_wall(5 if quick else 50)
    progress("seed programs in plain PyTorch")
    for seed, example in zip(report.seeds, EXAMPLES, strict=True):
        seed.bare = bare_time(example.code, 1 if quick else 3)
    for lesson in report.lessons:
        lesson.bare = bare_time(lesson.code, 1 if quick else 3)
    return report


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A fixed-width table: first column left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def _kb(size: int) -> str:
    return f"{size / 1024:.1f}"


def render(report: Report) -> str:
    """The report as text: environment, five sections, targets."""
    out = [f"Autograd Explorer benchmark{' (quick)' if report.quick else ''}: Python "
           f"{platform.python_version()}, {_versions()}, {os.cpu_count()} CPUs, load average "
           f"{report.load:.2f} at the start and {os.getloadavg()[0]:.2f} at the end; "
           f"WorkerPool(size={POOL_SIZE}): {report.threads} torch thread(s) per run.",
           f"Scale runs (sections 1, 3, 5) use {SCALE_LIMITS} instead of the app's 5 s and "
           "20,000 nodes; seed runs use the app's limits. Times in ms; medians.", ""]
    out += ["== 1. Pipeline vs bare torchviz (chain of N `y = y * 1.001`, loss.backward()) ==",
            "run = WorkerPool.run (fork, execute, Trace JSON, parse); view, layout (one dot run: "
            "positions + SVG), figure (at the engine's first step, built + JSON as "
            "st.plotly_chart sends it) = the Backward page; total = their sum.",
            "torchviz = make_dot(show_attrs, show_saved) + pipe('svg') in this process on the "
            "same graph; raised = the same with the recursion limit raised; ratio = total / "
            "torchviz (raised where it fails).",
            "drawing = the explorer drawing that torch graph (explorer.runner.graph.record + "
            "uncollapsed view + dot SVG; TooLarge: more than the app lays out); draw_ratio = "
            "drawing / torchviz.",
            _table(["ops", "nodes", "torchviz", "raised", "tv_nodes", "drawing", "draw_ratio",
                    "run", "view", "layout", "figure", "total", "ratio"],
                   [[str(s.ops), str(s.served.nodes),
                     _ms(s.torchviz_s) if s.torchviz_s is not None else "RecursionError",
                     _ms(s.raised_s), str(s.torchviz_nodes),
                     _ms(s.drawing_s) if s.drawing_s is not None else "TooLarge",
                     f"{s.drawing_s / s.baseline:.2f}x" if s.drawing_s is not None else "-",
                     _ms(s.served.run), _ms(s.served.view),
                     _ms(s.served.layout), _ms(s.served.figure), _ms(s.served.total),
                     f"{s.ratio:.2f}x"] for s in report.scales]), ""]
    out += ["== 2. Seed programs, warm (WorkerPool as the app's, app limits) ==",
            f"first run (zygote start + run): {_ms(report.first_run)} ms. End to end = run + "
            "the Backward page (or the Graph page without backward); bare = the program by "
            "plain exec in this process (no sandbox, worker or recording).",
            "run and pages = the medians of the run and of the page's work (view, layout, figure).",
            _table(["example", "runs", "p50", "p95", "max", "run", "pages", "bare", "error"],
                   [[s.key, str(len(s.runs)), _ms(s.pct(50)), _ms(s.pct(95)), _ms(max(s.times)),
                     _ms(statistics.median(r.run for r in s.runs)),
                     _ms(statistics.median(r.total - r.run for r in s.runs)), _ms(s.bare),
                     s.error or "-"] for s in report.seeds]), ""]
    out += ["== 3. The animation the Backward page offers as a download (plotly JSON) ==",
            "collapsed = the page's default (chains of one op grouped above 300 nodes), built in "
            "animation_ms; uncollapsed_ms = the page's pipeline uncollapsed.",
            _table(["ops", "nodes", "steps", "frames", "animation_ms", "collapsed_KB",
                    "uncollapsed_KB", "uncollapsed_ms"],
                   [[str(s.ops), str(s.served.nodes), str(s.served.steps),
                     str(len(frames_of(s.served.steps))), _ms(s.served.animation),
                     _kb(s.served.animation_bytes),
                     _kb(s.flat.animation_bytes) if s.flat else s.flat_error,
                     _ms(s.flat.total) if s.flat else s.flat_error] for s in report.scales]),
            ""]
    memory = report.memory
    assert memory is not None
    out += [f"== 4. Memory over {memory.runs} runs (autograd-basics, RSS in MiB) ==",
            _table(["process", "before", "after", "growth"],
                   [[name, f"{a:.1f}", f"{b:.1f}", f"{b - a:+.1f}"] for name, (a, b) in
                    (("zygote", memory.zygote), ("parent", memory.parent))]), ""]
    out += ["== 5. Where the time goes ==",
            "From section 1: run, in_child = the worker's execute() (Trace.elapsed_ms), rest = "
            "run - in_child: fork, copy-on-write, limits, Trace to JSON, socket, parse.",
            "The same chain executed in this process: execute, and inside it graphs = "
            "explorer.runner.graph.record after each statement (calls = how many), at_backward = "
            "the graph drawn when backward is called, hooks = hooking every node of the pass; then "
            "to_json = Trace.to_json, parse = Trace.from_json of it.",
            _table(["ops", "run", "in_child", "rest", "execute", "graphs", "calls",
                    "at_backward", "hooks", "to_json", "parse", "trace_MB"],
                   [[str(st.ops), _ms(sc.served.run), _ms(sc.served.in_child),
                     _ms(sc.served.run - sc.served.in_child), _ms(st.execute), _ms(st.graphs),
                     f"{st.graph_calls:g}", _ms(st.at_backward), _ms(st.hooks), _ms(st.to_json),
                     _ms(st.parse), f"{st.megabytes:.2f}"]
                    for st, sc in zip(report.stages, report.scales, strict=True)]), ""]
    out += ["== 6. The wall's cost per run (box + lock vs neither, turn about, medians) ==",
            _table(["program", "walled", "bare", "added"],
                   [[key, _ms(w), _ms(b), _ms(w - b)] for key, (w, b) in report.wall.items()]),
            ""]
    out += ["== 7. Famous lessons at their published sizes (app limits, medians) ==",
            "backprop ninja's four exercises (n_embd 10, n_hidden 64, batch 32): run = "
            "WorkerPool.run; bare = plain exec in this process; sent = the record as it crosses "
            "the wire; whole = the same record with every step's variables written whole (as "
            "every step was sent before a step sent only what changed); thinned = cut to fit "
            f"the {MAX_RESULT_BYTES >> 20} MiB a run may send.",
            _table(["lesson", "statements", "run", "bare", "sent_MiB", "whole_MiB", "thinned",
                    "error"],
                   [[x.name, str(x.statements), _ms(x.seconds), _ms(x.bare),
                     f"{x.sent / 2**20:.2f}", f"{x.whole / 2**20:.2f}",
                     "yes" if x.thinned else "no", x.error or "-"] for x in report.lessons]), ""]
    out += ["== Targets ==", *targets(report)]
    return "\n".join(out)


def targets(report: Report) -> list[str]:
    """PASS/MISS for each target, with the measured value."""
    def verdict(ok: bool, text: str) -> str:
        return f"{'PASS' if ok else 'MISS'}  {text}"

    loops = [s for s in report.seeds if s.runs[0].calls >= LOOP_CALLS]
    quick = [s for s in report.seeds if s not in loops]  # a loop takes longer in plain PyTorch
    slow = [s for s in quick if s.pct(50) * 1000 >= SEED_TARGET_MS]
    small = [s for s in report.scales if s.served.nodes <= RATIO_UP_TO_NODES]
    worst = max(small, key=lambda s: s.ratio)
    big = report.scales[-1]
    memory = report.memory
    assert memory is not None
    growth = max(memory.zygote[1] - memory.zygote[0], memory.parent[1] - memory.parent[0])
    return [
        verdict(not slow, f"seed programs but training loops p50 < {SEED_TARGET_MS:.0f} ms "
                f"warm: {len(quick) - len(slow)} of {len(quick)} under; median p50 "
                f"{_ms(statistics.median(s.pct(50) for s in quick))} ms"
                + "".join(f"; {s.key} {_ms(s.pct(50))} ms (bare {_ms(s.bare)} ms)"
                          for s in slow)),
        verdict(all(s.pct(50) <= LOOP_TARGET * s.bare for s in loops),
                f"training loops (seeds with {LOOP_CALLS}+ backward calls) p50 <= "
                f"{LOOP_TARGET:.0f}x plain PyTorch: " + ", ".join(
                    f"{s.key} ({s.runs[0].calls} calls) {_ms(s.pct(50))} ms / {_ms(s.bare)} ms "
                    f"= {s.pct(50) / s.bare:.2f}x" for s in loops)),
        verdict(worst.ratio <= RATIO_TARGET,
                f"pipeline <= {RATIO_TARGET}x torchviz up to ~2,000 nodes: worst "
                f"{worst.ratio:.2f}x at {worst.served.nodes} nodes ("
                + ", ".join(f"{s.served.nodes}: {s.ratio:.2f}x" for s in small)
                + "); the drawing alone: "
                + ", ".join(f"{s.served.nodes}: {s.drawing_s / s.baseline:.2f}x" for s in small
                            if s.drawing_s is not None)),
        verdict(big.served.total < BIG_TARGET_S and big.served.error is None,
                f"{big.served.nodes}-node graph (collapsed) < {BIG_TARGET_S:.0f} s: "
                f"{big.served.total:.2f} s"),
        verdict(big.served.animation_bytes < BIG_FIGURE_MB * 2**20,
                f"{big.served.nodes}-node animation < {BIG_FIGURE_MB:.0f} MB: "
                f"{big.served.animation_bytes / 2**20:.2f} MB"),
        verdict(growth < GROWTH_MIB,
                f"memory growth over {memory.runs} runs < {GROWTH_MIB:.0f} MiB: zygote "
                f"{memory.zygote[1] - memory.zygote[0]:+.1f} MiB, parent "
                f"{memory.parent[1] - memory.parent[0]:+.1f} MiB"),
        verdict(bool(report.lessons) and all(fits(x) for x in report.lessons),
                "backprop ninja's exercises at full size run and send their whole record: "
                + ", ".join(f"{x.name} {x.sent / 2**20:.1f} MiB in {_ms(x.seconds)} ms"
                            for x in report.lessons))]


def _versions() -> str:
    import torch

    dot = subprocess.run(["dot", "-V"], capture_output=True, text=True, check=False).stderr
    return f"torch {torch.__version__}, {dot.strip().removeprefix('dot - ')}"


def browser(quick: bool, progress: Callable[[str], None], against: str | None = None) -> str:
    """Click Run on the Graph page in Chromium and time until the step caption ("State after
    line N": the run is back and the page is drawn down to the graph) and until a node's label
    is in the graph's SVG (`_click_to_graph`), for the seed program and a ~2,000-node chain,
    each in a fresh tab; the app started as tests/conftest.py starts it. With `against` (a
    git revision), that revision's app is timed too, in the same run, each of its runs right
    after one of this checkout's (app `now`)."""
    from playwright.sync_api import sync_playwright

    cases = [("autograd-basics (7 nodes)", by_key("autograd-basics").code, "MeanBackward0"),
             ("chain of 1000 (2005 nodes)", chain(1_000, then_backward=False),
              "MulBackward0 × 1000")]
    repeats = 2 if quick else 9
    rows = []
    with ExitStack() as stack:
        apps = {"now": stack.enter_context(app(stack.enter_context(
            tempfile.TemporaryFile())))}
        if against:
            apps[against] = stack.enter_context(app(
                stack.enter_context(tempfile.TemporaryFile()),
                root=stack.enter_context(checkout(against))))
        playwright = stack.enter_context(sync_playwright())
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(chromium.close)
        for label, code, node in cases:
            progress(f"browser: {label}")
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in apps}
            for _ in range(repeats + 1):  # the first one also warms the app up
                for name, url in apps.items():
                    times[name].append(_click_to_graph(chromium, url, code, node))
            for name, taken in times.items():
                warm = taken[1:]
                rows.append([label, name, _ms(taken[0][1]),
                             _ms(statistics.median(t[0] for t in warm)),
                             _ms(statistics.median(t[1] for t in warm)),
                             _ms(max(t[1] for t in warm))])
        replays = _replay_section(chromium, apps, quick, progress)
    return "\n".join([
        f"== Browser: Run -> graph visible on the Graph page ({repeats} runs after a first) ==",
        "Debian Chromium headless, the app on 127.0.0.1, a fresh tab per run; load average "
        f"{os.getloadavg()[0]:.2f}. Times in ms from the mouse going down on Run, taken in "
        "the tab: caption = the step caption is in the page (run done, page drawn down to the "
        "graph), svg = the node's label is in the graph's SVG.",
        _table(["program", "app", "first_svg", "caption", "svg", "max_svg"], rows),
        "", *replays])


# In every frame of the tab, before its own scripts: the main frame notes when the mouse
# went down, each frame when the step caption or the node's label is first in its document
# (polled every 2 ms), on one clock (ms since the epoch, as frames share it).
MARKS = """
const now = () => performance.timeOrigin + performance.now(), marks = window.__marks = {};
addEventListener("mousedown", () => { marks.click = now(); }, true);
const look = () => {
  if (!marks.caption && document.body && document.body.innerText.includes(CAPTION)) {
    marks.caption = now();
  }
  if (!marks.svg) for (const t of document.querySelectorAll("svg text")) {
    if (t.textContent === NODE) { marks.svg = now(); break; }
  }
  setTimeout(look, 2);
};
look();
"""


def _click_to_graph(chromium: Any, url: str, code: str, node: str) -> tuple[float, float]:
    """One run of `code` on the Graph page in a fresh tab: seconds from the mouse going down
    on Run to the step caption in the page, and to `node`'s label in the graph's SVG, both
    timed in the tab itself (a click of the mouse where Run is, not Playwright's own checks
    before it, nor its round trips after)."""
    from playwright.sync_api import expect

    last_line = len(code.splitlines())  # the programs end with a statement
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(MARKS.replace("CAPTION", json.dumps(f"State after line {last_line}"))
                            .replace("NODE", json.dumps(node)))
    try:
        page = context.new_page()
        page.goto(f"{url}/Graph")
        run = page.get_by_role("button", name="Run")
        expect(run).to_be_visible(timeout=60_000)
        page.get_by_label("Code").fill(code)
        box = run.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        deadline, marks = time.monotonic() + 60, {}
        while not {"caption", "svg"} <= marks.keys():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the graph did not show {node} within 60 s")
            page.wait_for_timeout(20)
            for frame in page.frames:
                with suppress(Exception):  # a frame that went away meanwhile
                    marks |= frame.evaluate("window.__marks || {}")
        clicked = page.evaluate("window.__marks.click")
        return (marks["caption"] - clicked) / 1000, (marks["svg"] - clicked) / 1000
    finally:
        context.close()

# In the tab, before its scripts: when the mouse went down on Run, and when a replay picture's
# caption ("step 1 of N: ...") is first in a text node the page did not have at that moment
# (polled every 2 ms): a replay drawn anew, not the one the run before left.
REPLAY_MARKS = """
const now = () => performance.timeOrigin + performance.now(), marks = window.__replays = [];
addEventListener("mousedown", () => {
  document.querySelectorAll("svg text").forEach(t => { t.__old = true; });
  marks.push({click: now()});
}, true);
const look = () => {
  const last = marks.at(-1);
  if (last && !last.picture) for (const t of document.querySelectorAll("svg text")) {
    if (!t.__old && t.textContent.startsWith("step 1 of ")) { last.picture = now(); break; }
  }
  setTimeout(look, 2);
};
look();
"""


def _replay_section(chromium: Any, apps: dict[str, str], quick: bool,
                    progress: Callable[[str], None]) -> list[str]:
    """The Backward page: Run -> the replay's picture, a tab's first run and its later ones
    (`_replays`), for the seed program and a 205-node chain, in fresh tabs of every app in
    turn (the first tab of each only warms its app up)."""
    cases = [("autograd-basics (7 nodes)", by_key("autograd-basics").code, "x + 2", "x + {}"),
             ("chain of 100 (205 nodes)", chain(100), "1.001", "1.{:03d}")]
    tabs, runs = (2, 3) if quick else (5, 4)
    rows, number = [], 0
    for label, code, constant, changed in cases:
        progress(f"browser: the Backward page, {label}")
        firsts: dict[str, list[float]] = {name: [] for name in apps}
        laters: dict[str, list[float]] = {name: [] for name in apps}
        for tab in range(tabs + 1):
            for name, url in apps.items():
                programs = []
                for _ in range(runs):  # each run a constant apart: nothing is reused
                    number += 1
                    programs.append(code.replace(constant, changed.format(number + 2)))
                first, *later = _replays(chromium, url, programs)
                if tab:
                    firsts[name].append(first)
                    laters[name] += later
        rows += [[label, name, _ms(statistics.median(firsts[name])), _ms(max(firsts[name])),
                  _ms(statistics.median(laters[name])), _ms(max(laters[name]))]
                 for name in apps]
    return [
        f"== Browser: Run -> replay picture on the Backward page ({tabs} tabs of {runs} runs "
        "after a first tab) ==",
        "Times in ms from the mouse going down on Run to the replay's caption in a new text of "
        "the picture, taken in the tab; first = a tab's first run, later = its other runs, each "
        f"with one constant changed. Target: first <= {REPLAY_TARGET_MS:.0f} ms for the seed.",
        _table(["program", "app", "first", "max_first", "later", "max_later"], rows)]


def _replays(chromium: Any, url: str, programs: list[str]) -> list[float]:
    """Run each of `programs` on the Backward page of one fresh tab, in turn: seconds from the
    mouse going down on Run to the replay's picture, for each."""
    from playwright.sync_api import TimeoutError as Late
    from playwright.sync_api import expect

    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(REPLAY_MARKS)
    try:
        page = context.new_page()
        page.goto(f"{url}/Backward")
        run = page.get_by_role("button", name="Run")
        expect(run).to_be_visible(timeout=60_000)
        with suppress(Late):  # what the page loads before a run, loaded
            page.wait_for_load_state("networkidle", timeout=15_000)
        for number, code in enumerate(programs, 1):
            page.get_by_label("Code").fill(code)
            box = run.bounding_box()
            assert box is not None
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            deadline = time.monotonic() + 60
            while page.evaluate(f"window.__replays[{number - 1}]?.picture") is None:
                if time.monotonic() > deadline:
                    raise TimeoutError("the Backward page drew no replay within 60 s")
                page.wait_for_timeout(20)
        return [(m["picture"] - m["click"]) / 1000 for m in page.evaluate("window.__replays")]
    finally:
        context.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m explorer.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few runs")
    parser.add_argument("--browser", action="store_true",
                        help="time Run -> visible graph in Chromium instead")
    parser.add_argument("--against", metavar="REVISION",
                        help="with --browser: time that git revision's app too, interleaved")
    parser.add_argument("--classroom", action="store_true",
                        help="a class of learners over the websocket instead "
                             "(explorer.bench.classroom)")
    args = parser.parse_args(argv)

    def progress(what: str) -> None:
        print(f"[bench] {what}…", file=sys.stderr, flush=True)

    if args.classroom:
        print("\n".join(classroom(args.quick, progress)))
    elif args.browser:
        print(browser(args.quick, progress, args.against))
    else:
        print(render(measure(args.quick, progress)))


if __name__ == "__main__":
    main()
