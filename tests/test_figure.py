"""What the Backward page's figure draws, judged for a corpus: every learner program
(tests/learner_programs) and every preset that runs a backward pass, built as the page builds
it, at each place of its timeline. No two numbers overlap, no number covers a node, none
leaves the plot, none is cut, and no line leading to a number in a margin crosses another:
judged from the figure itself (text, font size, where it stands, the plot's size and ranges),
at a phone's width and a desktop's. A number with no room is counted, never lost.
"""

from __future__ import annotations

import html
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest

from explorer.content.examples import EXAMPLES
from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.ui.backward import HEIGHT
from explorer.views.animation import LEADERS, NUMBERS, NUMBERS_UP_TO, figure, growing, left_off
from explorer.views.export import animation_view
from explorer.views.render import LayoutError, positions, svg
from explorer.views.timeline import timeline

CORPUS = Path(__file__).parent / "learner_programs"
PROGRAMS = {f"{path.parent.relative_to(CORPUS)}/{path.stem}": path.read_text()
            for path in sorted(CORPUS.rglob("*.py"))} | {
    f"preset/{example.key}": example.code for example in EXAMPLES}
UNHURRIED = Limits(time_s=60)  # the app's limits but time: gradcheck makes 600 backward calls
# The plot's width in pixels where the page is drawn: a phone (390 px, less the page's and the
# figure's margins) and a desktop; its height is the figure's, less its margins.
WIDTHS = (338, 700)
CHAR, LINE = 0.6, 1.2  # a monospaced character's width and a line's height, in font sizes
# How a run the pool did not finish ends: each program runs in plain PyTorch
# (tests/test_corpus.py), so here these say only that the machine was too busy.
UNRUN = ("TimeLimit", "MemoryLimit", "Busy", "WorkerUnavailable", "WorkerCrashed")
CROWDED = ("x = torch.tensor([0.5, -1.0, 2.0, 3.0], requires_grad=True)\ny = x\n"  # 58 nodes
           "for i in range(18):\n    y = torch.tanh(y * x) + y\nout = y.sum()\nout.backward()\n")


@pytest.fixture(scope="module")
def traces(pool: WorkerPool) -> dict[str, Trace]:
    """Every program, run in the app's worker pool."""
    with ThreadPoolExecutor(pool.size) as runner:
        ran = list(runner.map(lambda code: pool.run(code, limits=UNHURRIED), PROGRAMS.values()))
    return dict(zip(PROGRAMS, ran, strict=True))


def numbers_drawn(chart: go.Figure, width: int) -> list[tuple[str, tuple[float, ...]]]:
    """Each number the chart writes, with the box its lines cover (left, bottom, right, top,
    in the plot's units) when the plot is `width` pixels wide."""
    made = chart.to_dict()
    trace, layout = made["data"][NUMBERS], made["layout"]
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    margin = layout["margin"]
    scale = min((layout["height"] - margin["t"] - margin["b"]) / (y1 - y0), width / (x1 - x0))
    size = trace["textfont"]["size"]
    assert trace["textfont"]["family"] == "monospace" and trace["textposition"] == (
        "middle center")
    return [(text, (x - w / 2, y - h / 2, x + w / 2, y + h / 2))
            for x, y, text in zip(trace["x"], trace["y"], map(html.unescape, trace["text"]),
                                  strict=True) if text
            for lines in [text.split("<br>")]
            for w, h in [(max(map(len, lines)) * CHAR * size / scale,
                          len(lines) * LINE * size / scale)]]


def _apart(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def leaders_drawn(chart: go.Figure) -> list[tuple[float, float, float, float]]:
    """Each dotted line leading to a number in a margin: (x0, y0, x1, y1)."""
    trace = chart.to_dict()["data"][LEADERS]
    xs, ys = trace["x"], trace["y"]
    return [(xs[k], ys[k], xs[k + 1], ys[k + 1]) for k in range(len(xs) - 1)
            if None not in (xs[k], xs[k + 1])]


def _through(line: tuple[float, ...], box: tuple[float, ...], rim: float = 0.1) -> bool:
    """Whether `line` runs through `box` (less a `rim` for the figure's rounding), sampled
    finely enough for any box drawn."""
    x0, y0, x1, y1 = line
    inner = (box[0] + rim, box[1] + rim, box[2] - rim, box[3] - rim)
    return any(inner[0] < x0 + (x1 - x0) * t < inner[2] and inner[1] < y0 + (y1 - y0) * t
               < inner[3] for t in (k / 2000 for k in range(2001)))


def judge(chart: go.Figure, nodes: dict[str, tuple[float, ...]], where: str) -> int:
    """Assert what `chart` draws is readable; the numbers it writes."""
    made = chart.to_dict()["layout"]
    (x0, x1), (y0, y1) = made["xaxis"]["range"], made["yaxis"]["range"]
    boxes = {n: (x - w / 2, y - h / 2, x + w / 2, y + h / 2) for n, (x, y, w, h) in nodes.items()}
    for width in WIDTHS:
        drawn = numbers_drawn(chart, width)
        for k, (text, box) in enumerate(drawn):
            assert "…" not in text and not re.search(r"\d\.\d{5}", text), (where, text)
            assert x0 <= box[0] and box[2] <= x1 and y0 <= box[1] and box[3] <= y1, (
                where, width, text, "leaves the plot")
            for node, other in boxes.items():
                assert _apart(box, other), (where, width, text, "on node", node)
            for second, other in drawn[k + 1:]:
                assert _apart(box, other), (where, width, text, "on", second)
        for line in leaders_drawn(chart):
            for text, box in drawn:
                assert not _through(line, box), (where, width, text, "crossed by", line)
    return len(numbers_drawn(chart, WIDTHS[0]))


def _picked(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The backward calls judged: the first that ran a node, the last, and one between."""
    ran = [c for c in calls if c.graph is not None and c.steps]
    return [ran[k] for k in sorted({0, len(ran) // 2, len(ran) - 1})] if ran else []


@pytest.mark.parametrize("key", PROGRAMS)
def test_the_backward_figure_writes_every_number_readably(key: str,
                                                          traces: dict[str, Trace]) -> None:
    trace = traces[key]
    calls = _picked(trace.backward)
    assert not trace.error or trace.error.type not in UNRUN, trace.error  # it would hide
    if not calls:
        pytest.skip(f"no backward pass ran a node ({trace.error and trace.error.type})")
    for call in calls:
        shown = animation_view(trace, call)
        try:
            layout, picture = positions(shown.dot), svg(shown.dot)
        except LayoutError as error:  # the page says so, and draws nothing
            pytest.skip(str(error))
        nodes = layout["nodes"]
        numbers = len(nodes) <= NUMBERS_UP_TO  # as the page's toggle starts
        line = timeline(trace, call, shown=shown)
        for index in range(len(line)):
            where = f"{key} call {call.call} place {index + 1}"
            built = line.statement(index)
            if built is None:
                chart = figure(call, layout, picture, shown.groups, at=line.engine_step(index),
                               numbers=numbers, animated=False, height=HEIGHT)
            else:
                chart = growing(call, layout, picture, shown.groups, line.made(index),
                                built.added, "", height=HEIGHT)
            judge(chart, nodes, where)
        if not numbers and len(nodes) <= 4 * NUMBERS_UP_TO:  # turned on by the learner
            last = figure(call, layout, picture, shown.groups, at=len(call.steps) - 1,
                          numbers=True, animated=False, height=HEIGHT)
            judge(last, nodes, f"{key} call {call.call} with numbers")


def test_the_oracle_sees_numbers_on_top_of_each_other() -> None:
    """The judge fails a figure whose numbers overlap, whose number covers a node, or whose
    number is cut."""
    nodes = {"a": (50.0, 50.0, 20.0, 10.0)}
    layout = {"height": 400, "margin": {"t": 0, "b": 0},
              "xaxis": {"range": [0, 200]}, "yaxis": {"range": [0, 200]}}

    def chart(xs: list[float], texts: list[str],
              leader: tuple[list[float], list[float]] = ([], [])) -> go.Figure:
        data: list[dict[str, Any]] = [{"type": "scatter"} for _ in range(LEADERS + 1)]
        data[NUMBERS] = {"type": "scatter", "mode": "text", "x": xs, "y": [150.0] * len(xs),
                         "text": texts, "textposition": "middle center",
                         "textfont": {"size": 11, "family": "monospace"}}
        data[LEADERS] = {"type": "scatter", "mode": "lines", "x": leader[0] or [None],
                         "y": leader[1] or [None]}
        return go.Figure(data=data, layout=layout)

    assert judge(chart([40, 160], ["1.", "2."]), nodes, "apart") == 2
    for xs, texts in (([40, 44], ["1.", "2."]), ([40], ["0.83…"]),
                      ([40], ["0.10000000149011612"]), ([199], ["1."])):
        with pytest.raises(AssertionError):
            judge(chart(xs, texts), nodes, "bad")
    with pytest.raises(AssertionError):
        judge(chart([50], ["1."]), {"a": (50.0, 150.0, 20.0, 10.0)}, "on a node")
    # A line from the number at 160 to what it is about, at 10: past the one at 40, or across.
    assert judge(chart([40, 160], ["1.", "2."], ([10, 155, None], [170, 150, None])),
                 nodes, "past") == 2
    with pytest.raises(AssertionError):
        judge(chart([40, 160], ["1.", "2."], ([10, 155, None], [152, 150, None])), nodes,
              "across")


def test_a_number_with_no_room_is_counted(pool: WorkerPool) -> None:
    """Every number a step has said is drawn or counted as left off: crowded into a short
    picture or with room in a tall one, the two add up to the same."""
    trace = pool.run(CROWDED)
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)
    said = []
    for height in (HEIGHT, 8 * HEIGHT):
        chart = figure(call, layout, picture, shown.groups, at=len(call.steps) - 1,
                       numbers=True, animated=False, height=height)
        said.append((len(numbers_drawn(chart, WIDTHS[0])), left_off(chart)))
    assert said[0][1] > 0 and said[0][1] > said[1][1], said  # no room: some, fewer with room
    assert said[0][0] + said[0][1] == said[1][0] + said[1][1], said
    animated = figure(call, layout, picture, shown.groups, numbers=True, height=HEIGHT)
    assert left_off(animated) >= said[0][1]  # of the whole pass


def test_the_figure_of_a_pass_is_built_quickly(pool: WorkerPool) -> None:
    """A 58-node pass with numbers turned on: the page draws a step in well under a second of
    its own time (a process's: other work on the machine does not count), however crowded."""
    trace = pool.run(CROWDED)
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)
    start = time.process_time()
    chart = figure(call, layout, picture, shown.groups, at=len(call.steps) - 1,
                   numbers=True, animated=False)
    took = time.process_time() - start
    # Its 4-element gradients are written as their values (present.few), a value a line
    # where short: more room each than a shape and norm took, so fewer fit; the rest are
    # counted (left_off), never lost.
    placed = judge(chart, layout["nodes"], "crowded")
    assert placed > 15 and placed + left_off(chart) > 100
    assert took < 1.0, took
