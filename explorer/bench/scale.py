"""Section 1 (and 3): the pipeline for a chain of N ops against torchviz's `make_dot` on the
same graph built here in torch, and the explorer's own drawing of that graph."""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.bench.pipeline import SCALE_LIMITS, Served, chain, serve
from explorer.pool.worker import WorkerPool
from explorer.trace.graph_view import view
from explorer.views.render import TooLarge, svg


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
    """Seconds for the explorer's drawing of the chain built here — explorer.record.graph.record,
    the uncollapsed view and its SVG: the picture torchviz draws, plus hover tooltips. None
    where the app refuses to lay out that many nodes (explorer.views.render.MAX_STATEMENTS)."""
    from explorer.record.graph import Ids, record

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
    result = Scale(ops, _median(served), statistics.median(ok) if ok else None,
                   statistics.median(raised), nodes,
                   statistics.median(drawn) if drawn else None)
    try:
        result.flat = serve(pool, chain(ops), SCALE_LIMITS, collapse=False)
    except Exception as error:  # noqa: BLE001 - e.g. graphviz's time limit: report it
        result.flat_error = type(error).__name__
    return result


def _median(runs: list[Served]) -> Served:
    """Each stage's median (the total is then the sum of medians)."""
    def median(stage: str) -> float:
        return statistics.median(getattr(r, stage) for r in runs)

    first = runs[0]
    return Served(median("run"), median("view"), median("layout"), median("figure"),
                  median("in_child"), first.nodes, first.steps, first.calls, median("animation"),
                  first.animation_bytes, first.error)
