"""The training page's two charts, the loss and the gradient norms per backward call. Pure.

A run's summaries are walked once (`curves`), into lines already reduced to a bounded number
of points (explorer.views.decimate) and leaves: the figures are then as cheap for a run of a
hundred thousand calls as for one of ten, and a page keeps the Curves with the run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

import plotly.graph_objects as go

from explorer.trace.schema import Summary
from explorer.views.decimate import POINTS, extremes

LEAVES = 10  # leaves drawn as lines of their own; the rest as one line of their largest norm


@dataclass(frozen=True)
class Line:
    """One line of a chart, reduced: its points (call, value) and how many it had."""

    name: str
    calls: list[int]
    values: list[float]
    count: int  # points before the line was reduced

    @property
    def reduced(self) -> bool:
        return len(self.calls) < self.count


@dataclass(frozen=True)
class Curves:
    """What the charts of one run draw: made once per run by `curves`."""

    loss: Line
    norms: list[Line]  # the first LEAVES leaves, in the order they first had a gradient norm
    others: Line | None  # per call, the largest gradient norm of all the other leaves
    hidden: int  # leaves drawn only in `others`
    first: float | None  # the first and the last loss (not only those a log scale draws)
    last: float | None

    @property
    def lines(self) -> list[Line]:
        return [self.loss, *self.norms, *([self.others] if self.others else [])]

    @property
    def reduced(self) -> bool:
        return any(line.reduced for line in self.lines)

    @property
    def drawn(self) -> int:
        """The most points any line draws."""
        return max(len(line.calls) for line in self.lines)


def curves(losses: Iterable[Summary], names: Mapping[str, str] | None = None,
           points: int = POINTS, leaves: int = LEAVES) -> Curves:
    """The loss and each leaf's ‖.grad‖ per call, positive values only (the axes are log
    scale), each line cut to at most `points` keeping every minimum and maximum; `names`:
    what to call a leaf known by its id only (explorer.views.training.leaf_names)."""
    loss: tuple[list[int], list[float]] = ([], [])
    norms: dict[str, tuple[list[int], list[float]]] = {}
    others: tuple[list[int], list[float]] = ([], [])
    hidden: set[str] = set()
    first = last = None
    for s in losses:
        if s.value is not None:
            first = s.value if first is None else first
            last = s.value
            if s.value > 0:
                loss[0].append(s.call)
                loss[1].append(s.value)
        largest = 0.0
        for leaf, norm in s.grad_norms.items():
            line = norms.get(leaf)
            if line is None and leaf not in hidden:
                if len(norms) < leaves:
                    line = norms[leaf] = ([], [])
                else:
                    hidden.add(leaf)
            if line is None:
                largest = max(largest, norm)
            elif norm > 0:
                line[0].append(s.call)
                line[1].append(norm)
        if largest > 0:
            others[0].append(s.call)
            others[1].append(largest)
    return Curves(
        loss=_line("loss", *loss, points),
        norms=[_line((names or {}).get(leaf, leaf), *line, points)
               for leaf, line in norms.items()],
        others=_line("others", *others, points) if hidden else None,
        hidden=len(hidden), first=first, last=last)


def _line(name: str, calls: list[int], values: list[float], points: int) -> Line:
    kept = extremes(values, points)
    return Line(name, [calls[i] for i in kept], [values[i] for i in kept], len(values))


def loss_figure(curves: Curves, title: str = "loss", axis: str = "iteration",
                height: int = 300) -> go.Figure:
    """Loss per iteration, log scale (it falls over orders of magnitude)."""
    fig = go.Figure(go.Scatter(x=curves.loss.calls, y=curves.loss.values, mode="lines",
                               name="loss", line={"color": "#d9480f"}))
    return _laid_out(fig, title, axis, height)


def grad_norm_figure(curves: Curves, title: str = "gradient norms", axis: str = "iteration",
                     others: str = "the other leaves", height: int = 300) -> go.Figure:
    """‖.grad‖ of every leaf per iteration (w1, w2 in the seed), log scale; past LEAVES
    leaves, one dotted line named `others` of the largest of theirs."""
    fig = go.Figure([go.Scatter(x=line.calls, y=line.values, mode="lines",
                                name=f"‖{escape(line.name)}.grad‖") for line in curves.norms])
    if curves.others is not None:
        fig.add_trace(go.Scatter(x=curves.others.calls, y=curves.others.values, mode="lines",
                                 name=escape(others),
                                 line={"dash": "dot", "color": "#868e96"}))
    return _laid_out(fig, title, axis, height)


def _laid_out(fig: go.Figure, title: str, axis: str, height: int) -> go.Figure:
    """Titles, and a log-scale value axis labelled with whole numbers (`log_ticks`)."""
    values = [v for trace in fig.data for v in trace.y or () if v and v > 0]
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=title, xaxis_title=axis, yaxis_type="log")
    if ticks := log_ticks(min(values), max(values)) if values else []:
        fig.update_yaxes(tickmode="array", tickvals=[m * 10.0 ** k for m, k in ticks],
                         ticktext=[tick_label(m, k) for m, k in ticks])
    return fig


MOST_TICKS = 8  # labels on a log axis: past that many, every second, third...
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_ticks(low: float, high: float) -> list[tuple[int, int]]:
    """Where a log axis over values `low`..`high` is labelled, as (m, k) for m × 10^k: the
    powers of ten among them; where fewer than two, 1, 2 and 5 times them; else every
    digit times them; else nowhere (a range that narrow plotly labels in full itself).
    Never plotly's own labels of a wider range, which write 0.02 as `2`."""
    bottom, top = math.floor(math.log10(low)), math.ceil(math.log10(high))
    for digits in ((1,), (1, 2, 5), range(1, 10)):
        ticks = [(m, k) for k in range(bottom, top + 1) for m in digits
                 if low <= m * 10.0 ** k <= high]
        if len(ticks) >= 2:
            return ticks[::math.ceil(len(ticks) / MOST_TICKS)]
    return []


def tick_label(m: int, k: int) -> str:
    """m × 10^k as a reader writes it: `0.002` to `5000` plainly, `10⁻⁵`, `2×10⁴` past."""
    if -3 <= k <= 3:
        return f"{m * 10.0 ** k:.{max(0, -k)}f}"
    power = "10" + str(k).translate(SUPERSCRIPT)
    return power if m == 1 else f"{m}×{power}"
