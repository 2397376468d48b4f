"""Section 10: steps inside loops. A training loop of a small `nn.Sequential` (on a fixed
tensor dataset, and through a DataLoader over a TensorDataset) run three ways, turn about, in
this process: by plain `exec`; by `explorer.record.execute.execute` with line steps on (the
app's limits, but time); and with `Limits(line_steps=0)` (the hooks still run, no inner step
is made). The same loops LONGER times as long, each way, split what a round costs from what a
run pays once (its first rounds, kept in full, and its statements). Then the record as it
crosses the wire (`explorer.record.thin.fitted`) for those loops and for a loop of larger
tensors through a function of the program's (500 rounds, also with `--quick`): its size whole
and sent, and what thinning said it took."""

from __future__ import annotations

import functools
import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from explorer.bench.table import ms, table
from explorer.safety.limits import Limits
from explorer.trace.wire import MAX_RESULT_BYTES

FULL_ITERATIONS, QUICK_ITERATIONS = 500, 20
BATCHES = 10  # the DataLoader's batches per epoch
LIMITS = replace(Limits(), time_s=120.0)  # the app's, but a loaded machine must not time out
LINE_TARGET = 1.5  # a training loop with line steps, against plain PyTorch
LONGER = 4  # the loops again, this many times as long: what one more round costs

SEQUENTIAL = """import torch

torch.manual_seed(0)
X = torch.randn(64, 10)
Y = X @ torch.randn(10, 1) + 0.1 * torch.randn(64, 1)
model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
loss_fn = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range({iterations}):
    pred = model(X)
    loss = loss_fn(pred, Y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
LOADER = """import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn({rows}, 10)
Y = X @ torch.randn(10, 1) + 0.1 * torch.randn({rows}, 1)
loader = DataLoader(TensorDataset(X, Y), batch_size=16)
model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
loss_fn = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range({epochs}):
    for xb, yb in loader:
        pred = model(xb)
        loss = loss_fn(pred, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
# Tensors of 10,000 values, four minibatch steps a round through a function of the program's,
# whose locals each step describes too.
LARGE = """import torch

torch.manual_seed(0)
x = torch.randn(100, 100)
w = torch.randn(100, 100, requires_grad=True)


def train_step(w, x):
    h = torch.tanh(x @ w)
    loss = (h * h).mean()
    loss.backward()
    return h, loss


for epoch in range({iterations}):
    for part in range(4):
        h, loss = train_step(w, x)
        with torch.no_grad():
            w -= 0.01 * w.grad
            w.grad.zero_()
"""


def programs(iterations: int) -> dict[str, str]:
    """The timed loops, each `iterations` backward calls."""
    return {"sequential": SEQUENTIAL.format(iterations=iterations),
            "dataloader": LOADER.format(rows=16 * BATCHES, epochs=iterations // BATCHES)}


@dataclass
class Loop:
    """One loop's times (seconds per run, wall and CPU) the three ways, and its record."""

    name: str
    iterations: int
    plain: list[float] = field(default_factory=list)
    on: list[float] = field(default_factory=list)
    off: list[float] = field(default_factory=list)
    plain_cpu: list[float] = field(default_factory=list)
    on_cpu: list[float] = field(default_factory=list)
    long_plain: list[float] = field(default_factory=list)  # LONGER times the iterations
    long_on: list[float] = field(default_factory=list)
    long_off: list[float] = field(default_factory=list)
    steps: int = 0  # with line steps on
    steps_off: int = 0
    error: str | None = None

    def ratio(self, a: str, b: str) -> float:
        return statistics.median(getattr(self, a)) / statistics.median(getattr(self, b))

    def per_round(self, way: str) -> float:
        """Seconds one more round takes `way` (plain, on or off): the longer loop's median less
        this one's, over the rounds between them (the rounds kept among them included)."""
        more = statistics.median(getattr(self, f"long_{way}")) - statistics.median(
            getattr(self, way))
        return more / (self.iterations * (LONGER - 1))

    @property
    def once(self) -> float:
        """Seconds a run with line steps on adds whatever its length: its added time less what
        its rounds add (the first ten rounds, kept in full, its statements, setting up)."""
        added = statistics.median(self.on) - statistics.median(self.plain)
        return added - self.iterations * (self.per_round("on") - self.per_round("plain"))


@dataclass
class Record:
    """One loop's record as it crosses the wire: bytes whole and sent, what thinning took
    (its note's list), the seconds the run and the thinning took."""

    name: str
    steps: int
    whole: int
    sent: int
    went: list[str]
    run_s: float
    fit_s: float
    error: str | None

    @property
    def fits(self) -> bool:
        """Sent within the cap, and a note said what went whenever something had to."""
        return self.sent <= MAX_RESULT_BYTES and (self.whole <= MAX_RESULT_BYTES
                                                   or bool(self.went))


@dataclass
class Lines:
    """Section 10's measurements."""

    loops: list[Loop]
    records: list[Record]


def measure_lines(quick: bool, runs: int, progress: Callable[[str], None]) -> Lines:
    """Each loop `runs` times each way, turn about (after one run each way not timed), then
    the records weighed. Imports PyTorch here."""
    from explorer.record.execute import execute

    iterations = QUICK_ITERATIONS if quick else FULL_ITERATIONS
    codes, longer = programs(iterations), programs(LONGER * iterations)
    by: dict[str, Callable[[str], object]] = {
        "plain": _plain, "on": functools.partial(execute, limits=LIMITS),
        "off": functools.partial(execute, limits=replace(LIMITS, line_steps=0))}
    loops = [Loop(name, iterations) for name in codes]
    kept: dict[str, object] = {}
    for turn in range(runs + 1):
        progress(f"steps inside loops, turn {turn} of {runs}")
        for loop in loops:
            ways = [(f"{length}{way}", code) for length, code in (
                ("", codes[loop.name]), ("long_", longer[loop.name])) for way in by]
            first = turn % len(ways)
            for way, code in ways[first:] + ways[:first]:  # each way first in turn
                gc.collect()
                wall, cpu = time.perf_counter(), time.process_time()
                trace = by[way.removeprefix("long_")](code)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                if trace is not None:
                    loop.error = loop.error or (trace.error.type if trace.error else None)
                    if way == "on":
                        loop.steps, kept[loop.name] = len(trace.steps), trace
                    elif way == "off":
                        loop.steps_off = len(trace.steps)
                if turn:
                    getattr(loop, way).append(wall)
                    if way in ("plain", "on"):
                        getattr(loop, f"{way}_cpu").append(cpu)
    progress("steps inside loops: the records on the wire")
    records = [weigh(loop.name, kept.pop(loop.name), 0.0) for loop in loops]
    large = LARGE.format(iterations=FULL_ITERATIONS)  # quick too: the biggest record
    gc.collect()
    started = time.perf_counter()
    trace = execute(large, limits=LIMITS)
    records.append(weigh("large", trace, time.perf_counter() - started))
    return Lines(loops, records)


def weigh(name: str, trace: object, run_s: float) -> Record:
    """`trace`'s answer whole, then fitted to what a run may send (timed)."""
    from explorer.record.thin import fitted
    from explorer.trace import Trace
    from explorer.trace.notes import said_part
    from explorer.trace.wire import trace_message

    assert isinstance(trace, Trace)
    whole = len(trace_message(trace))
    started = time.perf_counter()
    sent = len(fitted(trace))
    fit_s = time.perf_counter() - started
    note = next((n for n in trace.notes if n.key == "thinned"), None)
    went = [said_part(part, "en") for part in note.parts] if note else []
    return Record(name, len(trace.steps), whole, sent, went, run_s, fit_s,
                  trace.error.type if trace.error else None)


def _plain(code: str) -> None:
    """`code` by plain `exec` in this process: no sandbox, worker or recording."""
    exec(compile(code, "<plain>", "exec"), {"__name__": "__plain__"})  # noqa: S102


def section(lines: Lines) -> list[str]:
    """Section 10 as text: the loops' times, then their records on the wire."""
    went = [f"{r.name}: thinned: {'; '.join(r.went)}." for r in lines.records if r.went]
    return [
        "== 10. Steps inside loops (explorer.bench.lines, this process, turn about, medians) ==",
        f"A training loop ({lines.loops[0].iterations} backward calls; SGD on a small "
        f"nn.Sequential: on a fixed tensor, and through a DataLoader of {BATCHES} batches an "
        "epoch) three ways: plain = exec here; on = execute() with line steps (the app's "
        f"limits but time_s={LIMITS.time_s:g}); off = the same with Limits(line_steps=0); "
        "steps = the Trace's steps with them on / off; *_cpu = process time.",
        table(["loop", "iterations", "steps", "steps_off", "plain", "on", "off", "on/plain",
               "off/plain", "on/off", "plain_cpu", "on_cpu", "on/plain_cpu", "error"],
              [[x.name, str(x.iterations), str(x.steps), str(x.steps_off),
                ms(statistics.median(x.plain)), ms(statistics.median(x.on)),
                ms(statistics.median(x.off)), f"{x.ratio('on', 'plain'):.2f}x",
                f"{x.ratio('off', 'plain'):.2f}x", f"{x.ratio('on', 'off'):.2f}x",
                ms(statistics.median(x.plain_cpu)), ms(statistics.median(x.on_cpu)),
                f"{x.ratio('on_cpu', 'plain_cpu'):.2f}x", x.error or "-"]
               for x in lines.loops]),
        "",
        f"What one more round costs each way (the loops {LONGER} times as long, less the above; "
        "the rounds kept among them included) and what a run with line steps on adds whatever "
        "its length (once: its first rounds, kept in full, its statements, setting up).",
        table(["loop", "long_iterations", "round_plain_us", "round_on_us", "round_off_us",
               "round_on/plain", "round_off/plain", "once_ms"],
              [[x.name, str(LONGER * x.iterations),
                *(f"{x.per_round(way) * 1e6:.1f}" for way in ("plain", "on", "off")),
                *(f"{x.per_round(way) / x.per_round('plain'):.2f}x" for way in ("on", "off")),
                ms(x.once)] for x in lines.loops]),
        "",
        "The record with line steps on as it crosses the wire (explorer.record.thin.fitted): "
        f"whole = its answer unthinned; sent = fitted to the {MAX_RESULT_BYTES >> 20} MiB a "
        "run may send; levels = the thinning levels its note names; large = 500 rounds of "
        "10,000-value tensors through a function of the program's, 4 minibatches a round "
        "(run_s: its execute(); thin_s: fitted()).",
        *went,
        table(["record", "steps", "whole_MiB", "sent_MiB", "levels", "under_cap", "run_s",
               "thin_s", "error"],
              [[r.name, str(r.steps), f"{r.whole / 2**20:.2f}", f"{r.sent / 2**20:.2f}",
                str(len(r.went)), "yes" if r.fits else "no", f"{r.run_s:.2f}",
                f"{r.fit_s:.2f}", r.error or "-"] for r in lines.records]), ""]


def line_targets(lines: Lines) -> list[tuple[bool, str]]:
    """Section 10's targets, each met or not, with what was measured."""
    return [
        (all(x.error is None and x.ratio("on", "plain") <= LINE_TARGET for x in lines.loops),
         f"a training loop with line steps <= {LINE_TARGET}x plain PyTorch: " + ", ".join(
             f"{x.name} {ms(statistics.median(x.on))} ms / {ms(statistics.median(x.plain))} ms"
             f" = {x.ratio('on', 'plain'):.2f}x (off {x.ratio('off', 'plain'):.2f}x; a round "
             f"{x.per_round('on') / x.per_round('plain'):.2f}x, off "
             f"{x.per_round('off') / x.per_round('plain'):.2f}x; once {ms(x.once)} ms, of "
             f"the {ms((LINE_TARGET - 1) * statistics.median(x.plain))} ms the target leaves)"
             for x in lines.loops)),
        (all(r.fits for r in lines.records),
         f"a loop's record with line steps sent under {MAX_RESULT_BYTES >> 20} MiB, thinning "
         "saying what went: " + ", ".join(
             f"{r.name} {r.sent / 2**20:.1f} MiB of {r.whole / 2**20:.1f} MiB"
             f"{' (thinned)' if r.went else ''}" for r in lines.records))]
