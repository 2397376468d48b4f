"""What the Backward page's figure draws, judged for a corpus: every learner program
(tests/learner_programs) and every preset that runs a backward pass, built as the page builds
it, at each place of its timeline. No two numbers overlap, no number covers a node, none
leaves the plot, none is cut, none lies on an edge (its arrowhead too) or a module's frame or
name, each thing's number is written once, and no line leading to a number in a margin crosses
another or a node: judged from the figure itself (text, font size, where it stands and which
way it runs, the plot's size and ranges) against graphviz's layout, at a phone's width and a
desktop's. A number with no room is counted, never lost.
"""

from __future__ import annotations

import html
import math
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
from explorer.views import animation
from explorer.views.animation import (
    HOVER,
    LEADERS,
    NUMBERS,
    NUMBERS_UP_TO,
    figure,
    growing,
    left_off,
)
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
# A monospaced character's width, a line's height and from one line to the next (plotly's
# LINE_SPACING), in font sizes: as Chromium draws them (tests/test_browser_backward.py).
CHAR, LINE, SPACING = 0.6, 1.2, 1.3
# How a run the pool did not finish ends: each program runs in plain PyTorch
# (tests/test_corpus.py), so here these say only that the machine was too busy.
UNRUN = ("TimeLimit", "MemoryLimit", "Busy", "WorkerUnavailable", "WorkerCrashed")
CROWDED = ("x = torch.tensor([0.5, -1.0, 2.0, 3.0], requires_grad=True)\ny = x\n"  # 58 nodes
           "for i in range(18):\n    y = torch.tanh(y * x) + y\nout = y.sum()\nout.backward()\n")


MLP = ("import torch.nn as nn\ntorch.manual_seed(0)\n"
       "net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))\n"
       "x = torch.randn(5, 4)\ntarget = torch.tensor([0, 1, 1, 0, 1])\n"
       "loss = nn.functional.cross_entropy(net(x), target)\nloss.backward()\n")
SEED = "x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y * y * 3\nout = z.mean()\n" \
    "out.backward()\n"
SEEN = {"mlp": MLP, "seed": SEED, "crowded": CROWDED}  # with modules, the seed, crowded


@pytest.fixture(scope="module")
def traces(pool: WorkerPool) -> dict[str, Trace]:
    """Every program, run in the app's worker pool."""
    with ThreadPoolExecutor(pool.size) as runner:
        ran = list(runner.map(lambda code: pool.run(code, limits=UNHURRIED), PROGRAMS.values()))
    return dict(zip(PROGRAMS, ran, strict=True))


# Where plotly writes a text from its point, by textposition: the share of its width left of it.
LEFT_OF_POINT = {"middle center": 0.5, "middle right": 0.0, "middle left": 1.0}


def numbers_drawn(chart: go.Figure, width: int) -> list[tuple[str, tuple[float, ...]]]:
    """Each number the chart writes, with the box its lines cover (left, bottom, right, top,
    in the plot's units) when the plot is `width` pixels wide."""
    return [(text, box) for text, box, _ in numbers_about(chart, width)]


def numbers_about(chart: go.Figure, width: int) -> list[tuple[str, tuple[float, ...], str]]:
    """`numbers_drawn`, each with what it is about (`edge 3`, `sum n7`, `grad t19`)."""
    made = chart.to_dict()
    trace, layout = made["data"][NUMBERS], made["layout"]
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    margin = layout["margin"]
    scale = min((layout["height"] - margin["t"] - margin["b"]) / (y1 - y0), width / (x1 - x0))
    size = trace["textfont"]["size"]
    assert trace["textfont"]["family"] == "monospace"
    runs = trace.get("textposition", "middle center")
    runs = [runs] * len(trace["x"]) if isinstance(runs, str) else runs
    about = trace.get("customdata") or [""] * len(trace["x"])
    return [(text, (x - w * LEFT_OF_POINT[run], y - h / 2, x + w * (1 - LEFT_OF_POINT[run]),
                    y + h / 2), thing)
            for x, y, text, run, thing in zip(trace["x"], trace["y"],
                                              map(html.unescape, trace["text"]), runs, about,
                                              strict=True) if text
            for lines in [text.split("<br>")]
            for w, h in [(max(map(len, lines)) * CHAR * size / scale,
                          (LINE + (len(lines) - 1) * SPACING) * size / scale)]]


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


def _curve(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points close together along graphviz's cubic Bézier spline through `points`."""
    out = [points[0]]
    for k in range(0, len(points) - 3, 3):
        p0, p1, p2, p3 = points[k:k + 4]
        for t in (i / 40 for i in range(1, 41)):
            u = 1 - t
            out.append(tuple(u ** 3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t ** 3 * d
                             for a, b, c, d in zip(p0, p1, p2, p3, strict=True)))
    return out


def drawn_lines(layout: dict[str, Any]) -> list[tuple[float, ...]]:
    """Every line the picture draws that a number must not lie on: each edge's curve (graphviz's)
    and polyline (the orange overlay's), its arrowhead, and each module's frame."""
    lines: list[tuple[float, ...]] = [tuple(a) for a in layout["arrows"]]
    for _, _, points in layout["edges"]:
        for path in (_curve(points), points):
            lines += [(*a, *b) for a, b in zip(path, path[1:], strict=False)]
    for x0, y0, x1, y1 in layout["clusters"]:
        lines += [(x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0)]
    return lines


def node_boxes(layout: dict[str, Any]) -> dict[str, tuple[float, ...]]:
    """Each node's box (left, bottom, right, top)."""
    return {n: (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
            for n, (x, y, w, h) in layout["nodes"].items()}


def judge(chart: go.Figure, layout: dict[str, Any], where: str) -> int:
    """Assert what `chart` draws over `layout` is readable; the numbers it writes."""
    made = chart.to_dict()["layout"]
    (x0, x1), (y0, y1) = made["xaxis"]["range"], made["yaxis"]["range"]
    boxes = node_boxes(layout) | {f"the name of module box {k}": tuple(b)
                                  for k, b in enumerate(layout.get("cluster_names", ()))}
    lines = drawn_lines(layout | {k: layout.get(k, []) for k in ("arrows", "clusters")})
    for width in WIDTHS:
        drawn = numbers_about(chart, width)
        abouts = [thing for _, _, thing in drawn if thing]
        assert len(abouts) == len(set(abouts)), (where, "a thing's number written twice")
        for k, (text, box, _) in enumerate(drawn):
            assert "…" not in text and not re.search(r"\d\.\d{5}", text), (where, text)
            assert x0 <= box[0] and box[2] <= x1 and y0 <= box[1] and box[3] <= y1, (
                where, width, text, "leaves the plot")
            for node, other in boxes.items():
                assert _apart(box, other), (where, width, text, "on node", node)
            for second, other, _ in drawn[k + 1:]:
                assert _apart(box, other), (where, width, text, "on", second)
            for line in lines:
                assert not _crosses(line, box), (where, width, text, "on the line", line)
        for line in leaders_drawn(chart):
            for text, box, _ in drawn:
                assert not _through(line, box), (where, width, text, "crossed by", line)
            for node, box in boxes.items():
                assert not _through(line, box, rim=2), (where, "a leader crosses", node)
    return len(numbers_drawn(chart, WIDTHS[0]))


def _crosses(line: tuple[float, ...], box: tuple[float, ...]) -> bool:
    """Whether the segment `line` runs through the inside of `box` (less 0.1 for the
    figure's rounding): clipped to the box's slab in x, then in y (Liang–Barsky)."""
    inner = (box[0] + 0.1, box[1] + 0.1, box[2] - 0.1, box[3] - 0.1)
    x, y, dx, dy = line[0], line[1], line[2] - line[0], line[3] - line[1]
    start, end = 0.0, 1.0
    for towards, room in ((-dx, x - inner[0]), (dx, inner[2] - x), (-dy, y - inner[1]),
                          (dy, inner[3] - y)):
        if towards == 0:
            if room <= 0:
                return False
        elif towards < 0:
            start = max(start, room / towards)
        else:
            end = min(end, room / towards)
    return start < end


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
            judge(chart, layout, where)
        if not numbers and len(nodes) <= 4 * NUMBERS_UP_TO:  # turned on by the learner
            last = figure(call, layout, picture, shown.groups, at=len(call.steps) - 1,
                          numbers=True, animated=False, height=HEIGHT)
            judge(last, layout, f"{key} call {call.call} with numbers")


def test_the_oracle_sees_numbers_on_top_of_each_other() -> None:
    """The judge fails a figure whose numbers overlap, whose number covers a node, an edge or
    a module's frame, whose number is cut, or that writes one thing's number twice."""
    nodes = {"nodes": {"a": (50.0, 50.0, 20.0, 10.0)}, "edges": []}
    layout = {"height": 400, "margin": {"t": 0, "b": 0},
              "xaxis": {"range": [0, 200]}, "yaxis": {"range": [0, 200]}}

    def chart(xs: list[float], texts: list[str],
              leader: tuple[list[float], list[float]] = ([], []),
              about: list[str] | None = None) -> go.Figure:
        data: list[dict[str, Any]] = [{"type": "scatter"} for _ in range(LEADERS + 1)]
        data[NUMBERS] = {"type": "scatter", "mode": "text", "x": xs, "y": [150.0] * len(xs),
                         "text": texts, "textposition": "middle center",
                         "textfont": {"size": 11, "family": "monospace"},
                         "customdata": about or [f"edge {k}" for k in range(len(xs))]}
        data[LEADERS] = {"type": "scatter", "mode": "lines", "x": leader[0] or [None],
                         "y": leader[1] or [None]}
        return go.Figure(data=data, layout=layout)

    assert judge(chart([40, 160], ["1.", "2."]), nodes, "apart") == 2
    for xs, texts in (([40, 44], ["1.", "2."]), ([40], ["0.83…"]),
                      ([40], ["0.10000000149011612"]), ([199], ["1."])):
        with pytest.raises(AssertionError):
            judge(chart(xs, texts), nodes, "bad")
    with pytest.raises(AssertionError):
        judge(chart([50], ["1."]), {"nodes": {"a": (50.0, 150.0, 20.0, 10.0)}, "edges": []},
              "on a node")
    # An edge (a straight spline) under the number at 40, an arrowhead, a module's frame.
    for under in ({"edges": [("a", "b", [(30, 140), (35, 145), (45, 155), (50, 160)])]},
                  {"arrows": [(40, 140, 40, 160)]}, {"clusters": [(39, 100, 100, 200)]},
                  {"cluster_names": [(38, 148, 42, 152)]}):
        with pytest.raises(AssertionError):
            judge(chart([40], ["1."]), nodes | under, "on a line")
        assert judge(chart([160], ["1."]), nodes | under, "clear of it") == 1
    with pytest.raises(AssertionError):  # one edge's number twice
        judge(chart([40, 160], ["1.", "1."], about=["edge 0", "edge 0"]), nodes, "twice")
    with pytest.raises(AssertionError):  # a leader across a node
        judge(chart([160], ["1."], ([150, 10, None], [50, 50, None])), nodes, "across a node")
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


@pytest.mark.parametrize("key", ["complex/angle_gradient", *SEEN])
def test_margins_are_no_wider_than_the_numbers_need(
        key: str, pool: WorkerPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Margins widened for a number that found no room in them all the same drew the picture
    smaller for nothing: they are narrowed as far as leaves no more `.grad`s, and no more
    numbers, without room. `z.angle()` kept 35% of the plot's width for its picture, with
    every number drawn; now half."""
    trace = pool.run(SEEN.get(key) or PROGRAMS[key])
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)

    def drawn() -> tuple[float, int]:  # the picture's share of the plot's width; left off
        chart = figure(call, layout, picture, shown.groups, at=len(call.steps) - 1,
                       numbers=True, animated=False, height=HEIGHT)
        judge(chart, layout, key)
        low, high = chart.layout.xaxis.range
        return (layout["bb"][2] - layout["bb"][0]) / (high - low), left_off(chart)

    share, left = drawn()
    monkeypatch.setattr(animation, "NARROWER", ())  # the widest margins' picture
    widest, widest_left = drawn()
    assert share >= widest and left <= widest_left, (share, left, widest, widest_left)
    if key == "complex/angle_gradient":
        assert share > 0.45 and widest < 0.4 and left == widest_left == 0


@pytest.mark.parametrize("rounds", [19, 200])
def test_numbers_that_would_take_minutes_to_place_are_placed_within_a_bound(
        rounds: int, pool: WorkerPool) -> None:
    """A ladder (`a, b = a * b, a + b`) of 19 rounds has 40 nodes: its numbers, on by default,
    took 5.4 s to place at every step shown, and at 200 rounds (asked for) more than a
    minute. Placing stops at a bound of work, counted not timed: the page draws a step in
    well under a second of its own time, each number drawn or counted as left off."""
    trace = pool.run("x = torch.ones(1, requires_grad=True)\na = x; b = x\n"
                     f"for i in range({rounds}):\n    a, b = a * b, a + b\na.backward()\n")
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)
    start = time.process_time()
    chart = figure(call, layout, picture, shown.groups, at=len(call.steps) // 2, numbers=True,
                   animated=False, height=HEIGHT)
    took = time.process_time() - start
    assert took < 2.0, took
    placed = judge(chart, layout, f"ladder of {rounds}")
    assert placed > 0 and left_off(chart) > 0


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
    placed = judge(chart, layout, "crowded")
    assert placed > 15 and placed + left_off(chart) > 100
    assert took < 1.0, took


def _gap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """How far apart two boxes are (0 where they touch or overlap)."""
    return math.hypot(max(0.0, a[0] - b[2], b[0] - a[2]), max(0.0, a[1] - b[3], b[1] - a[3]))


@pytest.mark.parametrize("key", SEEN)
def test_each_grad_stands_by_its_own_leaf_and_each_number_is_drawn_once(
        key: str, pool: WorkerPool) -> None:
    """At the last step, at a phone's width and a desktop's, a `.grad` stands nearer its own
    leaf than any other node, or a leader runs from it to that leaf; the edges into a leaf's
    AccumulateGrad do not write its `.grad` again (from the leaf: never; from the nodes it
    sent to: not where it is what they carried); the rest is judged as for every program."""
    trace = pool.run(SEEN[key])
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)
    chart = figure(call, layout, picture, shown.groups, at=len(call.steps) - 1,
                   numbers=True, animated=False, height=HEIGHT)
    judge(chart, layout, key)
    boxes = node_boxes(layout)
    leaders = leaders_drawn(chart)
    grads = {g.leaf: g.node for g in call.leaf_grads if g.leaf in boxes}
    for width in WIDTHS:
        drawn = numbers_about(chart, width)
        written = {thing.split(" ", 1)[1]: _plain(text).removeprefix(".grad = ")
                   for text, _, thing in drawn if thing.startswith("grad ")}
        for text, box, thing in drawn:
            kind, what = thing.split(" ", 1)
            if kind == "grad":
                nearest = min(boxes, key=lambda n: _gap(box, boxes[n]))
                led = any(_gap(boxes[what], (x0, y0, x0, y0)) < 0.5 and _gap(box, (
                    x1, y1, x1, y1)) < 0.5 for x0, y0, x1, y1 in leaders)  # from it to its leaf
                assert nearest == what or led, (key, width, text, "nearest", nearest)
            elif kind == "edge":
                tail, head, _ = layout["edges"][int(what)]
                assert grads.get(tail) != head, (key, text, "repeats the .grad of", tail)
                leaf = next((leaf for leaf, node in grads.items() if node == tail), None)
                assert leaf is None or _plain(text) != written.get(leaf), (
                    key, text, "repeats the .grad of", leaf)
    assert len(set(grads) - set(written)) <= left_off(chart), (key, "a .grad lost")


def _plain(text: str) -> str:
    """A number as written, whatever its lines and padding."""
    return re.sub(r"\s+", " ", text.replace("<br>", " ").replace("\u00a0", " ")).strip()


def test_the_hover_names_nodes_as_the_picture_does(pool: WorkerPool) -> None:
    """Hovering a module's nodes tells where each sent gradient by the op the picture writes
    there, never by a node's id."""
    trace = pool.run(MLP)
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    chart = figure(call, positions(shown.dot), svg(shown.dot), shown.groups,
                   at=len(call.steps) - 1, numbers=True, animated=False, height=HEIGHT)
    hover = " ".join(chart.to_dict()["data"][HOVER]["hovertext"])
    assert "→ AccumulateGrad:" in hover and "→ TBackward0:" in hover
    ids = {n.id for n in trace.graphs[call.graph].nodes}
    assert not [i for i in ids if f"→ {i}:" in hover]
