"""The training page's two charts, the loss and the gradient norms per backward call. Pure.

A run's summaries are walked once (`curves`), into lines already reduced to a bounded number
of points (explorer.views.decimate) and leaves: the figures are then as cheap for a run of a
hundred thousand calls as for one of ten, and a page keeps the Curves with the run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from itertools import pairwise
from statistics import fmean

import plotly.graph_objects as go

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.trace.schema import Call, Round, Summary
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

    losses: list[Line]  # the loss of each program line that calls backward, in that order
    norms: list[Line]  # the first LEAVES leaves, in the order they first had a gradient norm
    others: Line | None  # per call, the largest gradient norm of all the other leaves
    hidden: int  # leaves drawn only in `others`
    loss_lines: int = 1  # program lines that call backward (past `leaves`, drawn as one)
    undrawn: int = 0  # losses a log axis cannot hold: zero, negative, infinite or NaN

    @property
    def lines(self) -> list[Line]:
        return [*self.losses, *self.norms, *([self.others] if self.others else [])]

    @property
    def reduced(self) -> bool:
        return any(line.reduced for line in self.lines)

    @property
    def drawn(self) -> int:
        """The most points any line draws."""
        return max(len(line.calls) for line in self.lines)


def curves(losses: Iterable[Summary], names: Mapping[str, str] | None = None,
           points: int = POINTS, leaves: int = LEAVES,
           lines: Mapping[int, str] | None = None) -> Curves:
    """The loss and each leaf's ‖.grad‖ per call, positive finite values only (the axes are
    log scale), each line cut to at most `points` keeping every minimum and maximum; `names`:
    what to call a leaf known by its id only (explorer.views.training.leaf_names). A program
    whose backward calls are made on several lines (a GAN's two losses) has a loss line for
    each, called as `lines` says (by its line number, else), never one line through losses
    of different things; but past `leaves` such lines, one line draws them all."""
    loss: dict[int | None, tuple[list[int], list[float]]] = {}
    every: tuple[list[int], list[float]] = ([], [])
    norms: dict[str, tuple[list[int], list[float]]] = {}
    others: tuple[list[int], list[float]] = ([], [])
    hidden: set[str] = set()
    undrawn = 0
    for s in losses:
        if s.value is not None and 0 < s.value < math.inf:
            for calls, values in (loss.setdefault(s.line, ([], [])), every):
                calls.append(s.call)
                values.append(s.value)
        elif s.value is not None:
            undrawn += 1
        largest = 0.0
        for leaf, norm in s.grad_norms.items():
            line = norms.get(leaf)
            if line is None and leaf not in hidden:
                if len(norms) < leaves:
                    line = norms[leaf] = ([], [])
                else:
                    hidden.add(leaf)
            if line is None and norm < math.inf:
                largest = max(largest, norm)
            elif 0 < norm < math.inf:
                line[0].append(s.call)
                line[1].append(norm)
        if largest > 0:
            others[0].append(s.call)
            others[1].append(largest)
    apart = 1 < len(loss) <= leaves
    return Curves(
        losses=[_line((lines or {}).get(line, str(line)), *drawn, points)
                for line, drawn in loss.items()] if apart else [_line("loss", *every, points)],
        norms=[_line((names or {}).get(leaf, leaf), *line, points)
               for leaf, line in norms.items()],
        others=_line("others", *others, points) if hidden else None,
        hidden=len(hidden), loss_lines=len(loss), undrawn=undrawn)


@dataclass(frozen=True)
class Compared:
    """Whether the loss fell: its mean over the calls at the start and over those at the end,
    like with like (`outer`: the rounds of that loop, else the first and last `count` calls)."""

    first: float
    last: float
    count: int  # calls at each end (in the loop's rounds: its first round's)
    outer: Round | None = None  # the loop whose first and last rounds were compared

    @property
    def fell(self) -> bool:
        return self.last < self.first

    def said(self, lang: str) -> str:
        """The verdict in words: "The loss fell from 1.172 to 0.336 (mean over the `epoch`
        loop's round 1 → mean over its round 3)"."""
        if self.outer is not None:
            how = text("compared_rounds", lang, name=code_span(self.outer.name),
                       of=self.outer.of)
        else:
            how = text("compared_ends" if self.count == 1 else "compared_tenths", lang,
                       count=self.count)
        return text("loss_fell" if self.fell else "loss_rose", lang, first=self.first,
                    last=self.last, compared=how)


def compared(losses: Sequence[Summary], full: Sequence[Call]) -> Compared | None:
    """Whether the loss fell over a run (None: fewer than two losses, or losses of several
    program lines, which no one verdict compares like with like). Minibatches and
    accumulated gradients make neighbouring calls' losses unlike, so where every call recorded
    in full (`full`) agrees that an outer loop of known length ran the same number of calls
    in each of its rounds (epochs), the mean of its first round is compared with that of its
    last; else the mean of the first tenth of the calls with that of the last tenth (for
    fewer than twenty, the first call with the last)."""
    values = [s.value for s in losses if s.value is not None]
    if len(values) < 2 or len({s.line for s in losses if s.value is not None}) > 1:
        return None
    made = losses[-1].call  # the calls the run made (a thinned record keeps fewer)
    if rounds := _rounds(made, full):
        outer, per = rounds
        first = [s.value for s in losses if s.value is not None and s.call <= per]
        last = [s.value for s in losses if s.value is not None and s.call > made - per]
        if first and last:
            return Compared(fmean(first), fmean(last), per, outer)
    count = max(1, len(values) // 10)
    return Compared(fmean(values[:count]), fmean(values[-count:]), count)


def _rounds(count: int, full: Sequence[Call]) -> tuple[Round, int] | None:
    """The outermost loop of known length, more than one round, that `count` calls (numbered
    from 1) ran in, several in each round, and how many a round: where every call in `full`
    ran in it, in the round its number gives."""
    around = full[0].rounds if full else None
    level = next((i for i, r in enumerate(around or []) if r.of and r.of > 1), None)
    if around is None or level is None:
        return None
    outer = around[level]
    per, rest = divmod(count, outer.of or 1)
    if per < 2 or rest:
        return None

    def loops(rounds: Sequence[Round]) -> list[tuple[int, int | None]]:
        """The loops down to the outer one, with the rounds of those around it."""
        return [(r.line, r.round) for r in rounds[:level]] + [(rounds[level].line,
                                                               rounds[level].of)]

    for call in full:
        rounds = call.rounds or []
        if len(rounds) <= level or loops(rounds) != loops(around) or (
                rounds[level].round != (call.call - 1) // per + 1):
            return None
    return outer, per


def _line(name: str, calls: list[int], values: list[float], points: int) -> Line:
    kept = extremes(values, points)
    return Line(name, [calls[i] for i in kept], [values[i] for i in kept], len(values))


def loss_figure(curves: Curves, title: str = "loss", axis: str = "backward call",
                height: int = 300) -> go.Figure:
    """Loss per backward call, log scale (it falls over orders of magnitude); a line and a
    legend for each program line whose calls it is."""
    fig = go.Figure([go.Scatter(x=line.calls, y=line.values, mode="lines", name=escape(line.name),
                                line={"color": "#d9480f"} if i == 0 else None)
                     for i, line in enumerate(curves.losses)])
    fig.update_layout(showlegend=len(curves.losses) > 1)
    return _laid_out(fig, title, axis, height)


def grad_norm_figure(curves: Curves, title: str = "gradient norms", axis: str = "backward call",
                     others: str = "the other leaves", height: int = 300) -> go.Figure:
    """‖.grad‖ of every leaf per backward call (w1, w2 in the seed), log scale; past LEAVES
    leaves, one dotted line named `others` of the largest of theirs; a legend names each line,
    one alone too."""
    fig = go.Figure([go.Scatter(x=line.calls, y=line.values, mode="lines",
                                name=f"‖{escape(line.name)}.grad‖") for line in curves.norms])
    if curves.others is not None:
        fig.add_trace(go.Scatter(x=curves.others.calls, y=curves.others.values, mode="lines",
                                 name=escape(others),
                                 line={"dash": "dot", "color": "#868e96"}))
    fig.update_layout(showlegend=True)
    return _laid_out(fig, title, axis, height)


def _laid_out(fig: go.Figure, title: str, axis: str, height: int) -> go.Figure:
    """Titles, and a log-scale value axis labelled with whole numbers (`log_ticks`); a few
    calls are each labelled, never a call 1.5 between them."""
    values = [v for trace in fig.data for v in trace.y or () if v and v > 0]
    calls = [c for trace in fig.data for c in trace.x or ()]
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=title, xaxis_title=axis, yaxis_type="log")
    if calls and max(calls) - min(calls) < MOST_TICKS:
        fig.update_xaxes(dtick=1)
    if ticks := log_ticks(min(values), max(values)) if values else []:
        fig.update_yaxes(tickmode="array", tickvals=[m * 10.0 ** k for m, k in ticks],
                         ticktext=[tick_label(m, k) for m, k in ticks])
    return fig


MOST_TICKS = 8  # labels on a log axis: past that many, every second, third...
EDGE = 1.25  # an end of the values this far from the nearest label is labelled itself
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_ticks(low: float, high: float) -> list[tuple[int, int]]:
    """Where a log axis over values `low`..`high` is labelled, as (m, k) for m × 10^k: the
    powers of ten among them; where fewer than two, 1, 2 and 5 times them; else every
    digit times them; else nowhere (a range that narrow plotly labels in full itself). An end
    of the values far from the nearest label (EDGE, and a third of the labels' spacing) is
    labelled too, to two digits (values up to 7.5 were labelled no higher than 1). Never
    plotly's own labels of a wider range, which write 0.02 as `2`."""
    low, high = (min(max(end, 1e-300), 1e300) for end in (low, high))  # m × 10^k: a float
    bottom, top = math.floor(math.log10(low)), math.ceil(math.log10(high))
    for digits in ((1,), (1, 2, 5), range(1, 10)):
        ticks = [(m, k) for k in range(bottom, top + 1) for m in digits
                 if low <= m * 10.0 ** k <= high]
        if len(ticks) >= 2:
            ticks = ticks[::math.ceil(len(ticks) / MOST_TICKS)]
            at = [math.log10(m * 10.0 ** k) for m, k in ticks]
            # far: past EDGE, and a third of the labels' spacing (on an axis of 30 decades
            # labelled every 4th, 320 stood on 1000)
            far = max(math.log10(EDGE), min(b - a for a, b in pairwise(at)) / 3)
            if math.log10(high) - at[-1] > far:
                ticks.append(_two_digits(high, math.floor))
            if at[0] - math.log10(low) > far:
                ticks.insert(0, _two_digits(low, math.ceil))
            return ticks
    return []


def _two_digits(value: float, rounded: Callable[[float], int]) -> tuple[int, int]:
    """`value` to two digits as (m, k), `rounded` into the values (down at the top, up at
    the bottom), a trailing zero dropped: 7.5 is (75, -1), 3000 is (3, 3)."""
    k = math.floor(math.log10(value)) - 1
    m = rounded(round(value / 10.0 ** k, 9))
    return (m // 10, k + 1) if m % 10 == 0 else (m, k)


def tick_label(m: int, k: int) -> str:
    """m × 10^k as a reader writes it: `0.002` to `5000` plainly, `10⁻⁵`, `2×10⁴`, `1.7×10⁻⁵`
    past (one digit before the point)."""
    digits = len(str(m)) - 1
    if -3 <= k + digits <= 3:
        return f"{m * 10.0 ** k:.{max(0, -k)}f}"
    power = "10" + str(k + digits).translate(SUPERSCRIPT)
    return power if m == 1 else f"{m / 10 ** digits:g}×{power}"
