"""One program timed two ways: through the app's server, stage by stage (`serve`), and by plain
`exec` in this process (`bare_time`); and the chain program the scale suites grow."""

from __future__ import annotations

import os
import statistics
import time
import warnings
from contextlib import redirect_stdout, suppress
from dataclasses import dataclass

import plotly.io as pio

from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.trace.graph_view import view
from explorer.views.animation import figure
from explorer.views.render import positions, svg

SCALE_LIMITS = Limits(time_s=60, graph_nodes=100_000)  # the app's: 5 s, 20,000 nodes


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
                    error=trace.error.type if trace.error else None,
                    calls=len(trace.losses))
    calls = [c for c in trace.backward if c.graph is not None and c.steps]
    graph = trace.graphs[calls[-1].graph] if calls else trace.graph
    if graph is None or not graph.dot:
        return served
    served.nodes = len(graph.nodes)
    t = time.perf_counter()
    if not calls:
        shown = view(graph, collapse=collapse)
        served.view = time.perf_counter() - t
        t = time.perf_counter()
        svg(shown.dot)
        served.layout = time.perf_counter() - t
        return served
    call = calls[-1]
    shown = view(graph, call.roots, show_saved=False, show_attrs=False, collapse=collapse)
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
    served.steps, served.animation_bytes = len(call.steps), len(spec.encode())
    return served


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
