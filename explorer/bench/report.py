"""The benchmark's report: every suite measured in one process (`measure`), then as text with a
PASS/MISS for each target (`render`, `targets`)."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from explorer.bench.lessons import Lesson, fits, measure_lessons
from explorer.bench.lines import Lines, line_targets, measure_lines, section
from explorer.bench.memory import Memory, measure_memory
from explorer.bench.patterns import BOUND_S, Worst, server_patterns, worst
from explorer.bench.pipeline import SCALE_LIMITS, bare_time
from explorer.bench.rerun import Rerun, measure_rerun
from explorer.bench.scale import Scale, measure_scale
from explorer.bench.seeds import POOL_SIZE, Seed, measure_seeds
from explorer.bench.stages import Stages, measure_stages
from explorer.bench.table import kb, ms, table
from explorer.bench.wall import measure_wall
from explorer.content.examples import EXAMPLES, by_key
from explorer.pool.worker import WorkerPool
from explorer.trace.wire import MAX_RESULT_BYTES
from explorer.views.animation import frames_of

# PyTorch is imported only once the worker runs are measured, so that this process is, like
# the app's server, without it while it drives the pool.

FULL_OPS = (10, 100, 1_000, 5_000)  # a chain of n ops has 2n + 5 nodes at its backward call
QUICK_OPS = (10, 50)
SEED_TARGET_MS = 100.0
RATIO_TARGET = 1.5
RATIO_UP_TO_NODES = 2_500  # "up to ~2,000 nodes": every size but the ~10,000-node one
BIG_TARGET_S = 5.0
BIG_FIGURE_MB = 10.0
GROWTH_MIB = 5.0  # RSS growth over all runs still counted as noise
LOOP_TARGET = 2.0  # a seed training loop, end to end, against its time in plain PyTorch
LOOP_CALLS = 100  # backward calls that make a seed program a training loop
RERUN_TARGET_S = 0.3  # server CPU per Training page rerun after a run at the hosted limits


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
    rerun: Rerun | None = None
    patterns: dict[str, Worst] = field(default_factory=dict)  # by where the pattern is
    lines: Lines | None = None


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
        progress("the Training page after a long run")
        report.rerun = measure_rerun(pool, quick, 3 if quick else 20)
        progress("the server's patterns, attacked")
        report.patterns = {name: worst(p) for name, p in server_patterns().items()}
        import torch

        torch.set_num_threads(report.threads)  # as a worker of the pool runs
        for ops in sizes:
            progress(f"stages in this process, chain of {ops}")
            report.stages.append(measure_stages(ops, 1 if quick else 3))
        report.lines = measure_lines(quick, 2 if quick else 7, progress)
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


def render(report: Report) -> str:
    """The report as text: environment, ten sections, targets."""
    out = [f"Autograd Explorer benchmark{' (quick)' if report.quick else ''}: Python "
           f"{platform.python_version()}, {_versions()}, {os.cpu_count()} CPUs, load average "
           f"{report.load:.2f} at the start and {os.getloadavg()[0]:.2f} at the end; "
           f"WorkerPool(size={POOL_SIZE}): {report.threads} torch thread(s) per run.",
           f"Scale runs (sections 1, 3, 5) use {SCALE_LIMITS} instead of the app's 5 s and "
           "20,000 nodes; seed runs use the app's limits. Times in ms; medians.", ""]
    out += ["== 1. Pipeline vs bare torchviz (chain of N `y = y * 1.001`, loss.backward()) ==",
            "run = WorkerPool.run (fork, execute, the answer written and read); view, layout "
            "(one dot run: positions + SVG), figure (at the engine's first step, built + JSON as "
            "st.plotly_chart sends it) = the Backward page; total = their sum.",
            "torchviz = make_dot(show_attrs, show_saved) + pipe('svg') in this process on the "
            "same graph; raised = the same with the recursion limit raised; ratio = total / "
            "torchviz (raised where it fails).",
            "drawing = the explorer drawing that torch graph (explorer.record.graph.record + "
            "uncollapsed view + dot SVG; TooLarge: more than the app lays out); draw_ratio = "
            "drawing / torchviz.",
            table(["ops", "nodes", "torchviz", "raised", "tv_nodes", "drawing", "draw_ratio",
                   "run", "view", "layout", "figure", "total", "ratio"],
                  [[str(s.ops), str(s.served.nodes),
                    ms(s.torchviz_s) if s.torchviz_s is not None else "RecursionError",
                    ms(s.raised_s), str(s.torchviz_nodes),
                    ms(s.drawing_s) if s.drawing_s is not None else "TooLarge",
                    f"{s.drawing_s / s.baseline:.2f}x" if s.drawing_s is not None else "-",
                    ms(s.served.run), ms(s.served.view),
                    ms(s.served.layout), ms(s.served.figure), ms(s.served.total),
                    f"{s.ratio:.2f}x"] for s in report.scales]), ""]
    out += ["== 2. Seed programs, warm (WorkerPool as the app's, app limits) ==",
            f"first run (zygote start + run): {ms(report.first_run)} ms. End to end = run + "
            "the Backward page (or the Graph page without backward); bare = the program by "
            "plain exec in this process (no sandbox, worker or recording).",
            "run and pages = the medians of the run and of the page's work (view, layout, figure).",
            table(["example", "runs", "p50", "p95", "max", "run", "pages", "bare", "error"],
                  [[s.key, str(len(s.runs)), ms(s.pct(50)), ms(s.pct(95)), ms(max(s.times)),
                    ms(statistics.median(r.run for r in s.runs)),
                    ms(statistics.median(r.total - r.run for r in s.runs)), ms(s.bare),
                    s.error or "-"] for s in report.seeds]), ""]
    out += ["== 3. The animation the Backward page offers as a download (plotly JSON) ==",
            "collapsed = the page's default (chains of one op grouped above 300 nodes), built in "
            "animation_ms; uncollapsed_ms = the page's pipeline uncollapsed.",
            table(["ops", "nodes", "steps", "frames", "animation_ms", "collapsed_KB",
                   "uncollapsed_KB", "uncollapsed_ms"],
                  [[str(s.ops), str(s.served.nodes), str(s.served.steps),
                    str(len(frames_of(s.served.steps))), ms(s.served.animation),
                    kb(s.served.animation_bytes),
                    kb(s.flat.animation_bytes) if s.flat else s.flat_error,
                    ms(s.flat.total) if s.flat else s.flat_error] for s in report.scales]),
            ""]
    memory = report.memory
    assert memory is not None
    out += [f"== 4. Memory over {memory.runs} runs (autograd-basics, RSS in MiB) ==",
            table(["process", "before", "after", "growth"],
                  [[name, f"{a:.1f}", f"{b:.1f}", f"{b - a:+.1f}"] for name, (a, b) in
                   (("zygote", memory.zygote), ("parent", memory.parent))]), ""]
    out += ["== 5. Where the time goes ==",
            "From section 1: run, in_child = the worker's execute() (Trace.elapsed_ms), rest = "
            "run - in_child: fork, copy-on-write, limits, the answer's JSON, socket, decode.",
            "The same chain executed in this process: execute, and inside it graphs = "
            "explorer.record.graph.record after each statement (calls = how many), at_backward = "
            "the graph drawn when backward is called, hooks = hooking every node of the pass; then "
            "encode = the answer as the worker writes it (explorer.trace.wire.trace_message), "
            "decode = Trace.from_json of it, decoded and checked in one pass.",
            table(["ops", "run", "in_child", "rest", "execute", "graphs", "calls",
                   "at_backward", "hooks", "encode", "decode", "answer_MB"],
                  [[str(st.ops), ms(sc.served.run), ms(sc.served.in_child),
                    ms(sc.served.run - sc.served.in_child), ms(st.execute), ms(st.graphs),
                    f"{st.graph_calls:g}", ms(st.at_backward), ms(st.hooks), ms(st.encode),
                    ms(st.decode), f"{st.megabytes:.2f}"]
                   for st, sc in zip(report.stages, report.scales, strict=True)]), ""]
    out += ["== 6. The wall's cost per run (box + lock vs neither, turn about, medians) ==",
            table(["program", "walled", "bare", "added"],
                  [[key, ms(w), ms(b), ms(w - b)] for key, (w, b) in report.wall.items()]),
            ""]
    out += ["== 7. Famous lessons at their published sizes (app limits, medians) ==",
            "backprop ninja's four exercises (n_embd 10, n_hidden 64, batch 32): run = "
            "WorkerPool.run; bare = plain exec in this process; sent = the record as it crosses "
            "the wire; whole = the same record with every step's variables written whole (as "
            "every step was sent before a step sent only what changed); thinned = cut to fit "
            f"the {MAX_RESULT_BYTES >> 20} MiB a run may send.",
            table(["lesson", "statements", "run", "bare", "sent_MiB", "whole_MiB", "thinned",
                   "error"],
                  [[x.name, str(x.statements), ms(x.seconds), ms(x.bare),
                    f"{x.sent / 2**20:.2f}", f"{x.whole / 2**20:.2f}",
                    "yes" if x.thinned else "no", x.error or "-"] for x in report.lessons]), ""]
    rerun = report.rerun
    assert rerun is not None
    out += ["== 8. The Training page after a long run (server CPU, this process) ==",
            "calls = backward calls of `(ws[i % 1000] * 2.0).backward()` over 1,000 leaves, run "
            "under the hosted training limits; first = the page's first run with that Trace (its "
            "charts made); rerun = each rerun after, median and max.",
            table(["calls", "first", "rerun_p50", "rerun_max", "error"],
                  [[f"{rerun.calls}", ms(rerun.first), ms(rerun.median), ms(max(rerun.reruns)),
                    rerun.error or "-"]]), ""]
    slowest = sorted(report.patterns.items(), key=lambda item: -item[1].seconds)[:5]
    out += ["== 9. The server's patterns, attacked (explorer.bench.patterns) ==",
            f"The slowest 5 of {len(report.patterns)}: one search over the text made to make it "
            "backtrack most, up to the longest text the server matches.",
            table(["pattern", "chars", "ms"],
                  [[name, f"{w.length:,}", ms(w.seconds)] for name, w in slowest]), ""]
    assert report.lines is not None
    out += section(report.lines)
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
    rerun = report.rerun
    assert rerun is not None
    lines = report.lines
    assert lines is not None
    return [
        verdict(not slow, f"seed programs but training loops p50 < {SEED_TARGET_MS:.0f} ms "
                f"warm: {len(quick) - len(slow)} of {len(quick)} under; median p50 "
                f"{ms(statistics.median(s.pct(50) for s in quick))} ms"
                + "".join(f"; {s.key} {ms(s.pct(50))} ms (bare {ms(s.bare)} ms)"
                          for s in slow)),
        verdict(all(s.pct(50) <= LOOP_TARGET * s.bare for s in loops),
                f"training loops (seeds with {LOOP_CALLS}+ backward calls) p50 <= "
                f"{LOOP_TARGET:.0f}x plain PyTorch: " + ", ".join(
                    f"{s.key} ({s.runs[0].calls} calls) {ms(s.pct(50))} ms / {ms(s.bare)} ms "
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
                + ", ".join(f"{x.name} {x.sent / 2**20:.1f} MiB in {ms(x.seconds)} ms"
                            for x in report.lessons)),
        verdict(max(rerun.first, *rerun.reruns) < RERUN_TARGET_S,
                f"Training page < {RERUN_TARGET_S} s of server CPU per rerun after "
                f"{rerun.calls:,} backward calls: first {ms(rerun.first)} ms, reruns "
                f"{ms(rerun.median)} ms median, {ms(max(rerun.reruns))} ms at most"),
        verdict(max(w.seconds for w in report.patterns.values()) < BOUND_S,
                f"every server pattern < {BOUND_S * 1000:.0f} ms on any text: the slowest of "
                f"{len(report.patterns)} took "
                f"{ms(max(w.seconds for w in report.patterns.values()))} ms"),
*(verdict(ok, text) for ok, text in line_targets(lines))]


def _versions() -> str:
    import torch

    dot = subprocess.run(["dot", "-V"], capture_output=True, text=True, check=False).stderr
    return f"torch {torch.__version__}, {dot.strip().removeprefix('dot - ')}"
