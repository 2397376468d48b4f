"""The backward pass as a plotly animation that plays in the browser. Pure: no torch.

The picture is graphviz's SVG of the same DOT the graph page shows, laid under the plot; the
animated overlays sit at graphviz's own coordinates: an orange outline on the node the
engine runs, green marks on the nodes done (never on one that raised the call's error),
orange edges carrying gradient so far (wider for larger gradients), and gold marks on leaves
(and tensors that retain their grad) whose `.grad` was written. With `numbers`, each edge is
labelled with the gradient it carried, a node where edges meet with their sum
(`2.2500 + 2.2500 = 4.5000`) and such a tensor with the `.grad` written, in PyTorch's print
style (explorer.views.numbers). A number is written once: an edge into a leaf's AccumulateGrad is
not, where the `.grad` written beside the leaf says the same. No number covers another, a
node, an edge (its arrowhead too) or a module's frame or name, or leaves the plot, however
narrow it is drawn (down to a phone's NARROW pixels): each stands beside what it is about,
else is written short (a few values, present.few, as they are; more as their shape and norm)
on one line or on lines of their own, else stands in a margin with a dotted line to what it
is about that crosses no other number and no node; one with no room even there is left off,
never cut, and counted (`left_off`: the page says how many, and where to read them). A
number is pinned by its side that faces what it is about, so that drawn wider (a desktop's
plot writes it smaller) it still stands by it.
Frames hold only overlay data, and long passes are batched into at most MAX_FRAMES frames.
Frames come in blocks of about sqrt(frames): a block's first frame holds every overlay, the
others only what changed since it (plotly merges them into it), so the figure grows about
linearly with the pass.
"""

from __future__ import annotations

import base64
import itertools
import math
from collections import defaultdict
from collections.abc import Iterator
from html import escape
from typing import Any, NamedTuple

import plotly.graph_objects as go

from explorer.content.i18n import text
from explorer.trace.schema import Call, Gradient, LeafGrad
from explorer.views.hooked import changed
from explorer.views.numbers import written
from explorer.views.present import cut, described, few, preview

MAX_FRAMES = 120
NUMBERS_UP_TO = 40  # nodes of a picture that shows numbers unless asked not to
HOVER_LINES = 12  # lines a node's hover text shows: what it received and sent, its .grad
HOVER_OP = 60  # characters of an op's name a hover line writes (each node's hover names many)
WIDTHS = (1.5, 3, 4.5, 6.5)  # edge width for each magnitude class
ORANGE, GREEN, GOLD = "#f76707", "#2f9e44", "#f2b705"
# The figure's traces, in drawing order. The green marks and the edges of each width are two
# traces each: what earlier blocks of frames drew (settled) and what this block drew (recent).
SETTLED = (0, 4, 6, 8, 10)  # the green marks, then the edges of each width
RECENT = (1, 5, 7, 9, 11)
OUTLINE, STARS, HOVER, NUMBERS, CAPTION = 2, 3, 12, 13, 14  # the hover points are invisible
LEADERS = 15  # dotted lines from numbers in the margin to what they are about
RED = "#c92a2a"
PAD = 4  # graphviz's margin around the drawing, in points
# The numbers' text, in pixels: a monospaced font, so a text's width is its length times CHAR.
FONT = 11
CHAR, LINE, GAP = 0.6 * FONT, 1.2 * FONT, 1.5  # a character's width, a line's height, a rim
SPACING = 1.3 * FONT  # from one line's baseline to the next's (plotly's LINE_SPACING)
GAP_PT = 2  # points between a number and the edge it is about
SHORT = 12  # characters of a larger vector written short (its shape and norm, mostly)
NARROW = 320  # pixels: the narrowest the plot is drawn (a phone's width, less the margins)
TOP = 58  # pixels above the plot: a row for plotly's tools (shown on a touch), the caption
MARGIN = TOP + 10  # pixels of the figure's height above and below the plot (see _layout)
NARROWER = (0.0, 0.25, 0.5, 0.75)  # the margins tried narrower, as shares of the widest's
WORK = 1_000_000  # grid cells, and what they hold, looked at in placing a picture's numbers
MARGIN_ROWS = 240  # quarter rows above and below its own where a number may stand in the margin
LEVELS = (0, 1, 2)  # the forms of a number, widest first (_forms)
RUNS = {1: "middle right", -1: "middle left", 0: "middle center"}  # plotly's, by Placed.side
_SKIP = {"hoverinfo": "skip", "showlegend": False}
_LINES = {"mode": "lines", "opacity": 0.8, **_SKIP}


def _marker(colour: str, symbol: str, size: int) -> dict[str, Any]:
    return {"mode": "markers", "marker": {"color": colour, "symbol": symbol, "size": size,
                                          "line": {"width": 1, "color": "white"}}, **_SKIP}


STYLES = {  # how each trace is drawn: frames change only its points (and the caption's text)
    SETTLED[0]: _marker(GREEN, "circle", 9), RECENT[0]: _marker(GREEN, "circle", 9),
    OUTLINE: {"mode": "lines", "line": {"color": ORANGE, "width": 4}, **_SKIP},
    STARS: _marker(GOLD, "star", 14),
    **{trace: {"line": {"color": ORANGE, "width": width}, **_LINES}
       for part in (SETTLED, RECENT) for trace, width in zip(part[1:], WIDTHS, strict=True)},
    HOVER: {"mode": "markers", "marker": {"size": 18, "opacity": 0}, "hoverinfo": "text",
            "showlegend": False, "name": "nodes"},
    NUMBERS: {"mode": "text", "cliponaxis": False,  # each number's textposition: _texts
              "textfont": {"size": FONT, "color": RED, "family": "monospace"}, **_SKIP},
    CAPTION: {"mode": "text", "textposition": "top right", "textfont": {"size": 13},
              "cliponaxis": False, **_SKIP},  # above the plot, in its top margin
    LEADERS: {"mode": "lines", "line": {"color": RED, "width": 0.8, "dash": "dot"}, **_SKIP},
}


def frames_of(steps: int) -> list[range]:
    """Which engine steps each frame adds: one each, or batched past MAX_FRAMES."""
    per = max(1, math.ceil(steps / MAX_FRAMES))
    return [range(i, min(i + per, steps)) for i in range(0, steps, per)]


def figure(call: Call, layout: dict[str, Any], svg: str,
           groups: dict[str, list[str]] | None = None, at: int | None = None,
           height: int = 640, numbers: bool | None = None, animated: bool = True,
           lang: str = "en", ahead: bool = True) -> go.Figure:
    """The animated figure of one recorded backward call over its laid-out graph, showing
    the state after engine step `at` (0-based; None: before the pass), with the gradients'
    values written on it if `numbers` (None: if it has at most NUMBERS_UP_TO nodes). Not
    `animated`, it is that state alone, with no frames, play buttons or slider: a page that
    steps through the pass with controls of its own draws it anew at each step. Its captions
    are in `lang`. Not `ahead`, hovering a node tells nothing of the steps after `at` (for a
    learner predicting them)."""
    where = _grouped(groups or {})
    boxes = layout["nodes"]
    paths: Paths = {}
    for tail, head, points in layout["edges"]:  # parallel edges (y * y) each keep their own
        paths.setdefault((tail, head), []).append(points)
    steps = call.steps
    carried = _carried(call, where, paths)
    top = max((size for edges in carried.values() for _, size, _ in edges
               if math.isfinite(size)), default=1.0) or 1.0
    y1 = layout["bb"][3]
    written_at: dict[int, list[str]] = {}
    for g in _written(call):
        written_at.setdefault(g.after - 1, []).append(g.leaf)
    if numbers is None:
        numbers = len(boxes) <= NUMBERS_UP_TO
    order = {id(points): k for k, (_, _, points) in enumerate(layout["edges"])}
    labels, anchors = _labels(call, where, boxes, carried, order, paths, lang) if numbers else (
        {}, {})
    placed, bounds = _place(labels, anchors, _obstacles(layout), tuple(layout["bb"]), height)
    x0 = bounds[0] + PAD  # the captions' left end: the plot's, margin and all
    # Where numbers will stand, all from the first frame on (empty until said): plotly
    # animated without a redraw puts text that is new to a trace in the wrong place.
    said = {key: "" for step in sorted(labels) for key in labels[step]}
    # A still picture shows its one step, as the page's controls name it; frames, batches.
    batches = frames_of(len(steps)) if animated else [range(i, i + 1) for i in range(len(steps))]
    shown = next(k for k, batch in enumerate(batches) if at in batch) if at is not None and \
        batches else 0
    block = math.isqrt(max(0, len(batches) - 1)) + 1  # frames per block: ceil(sqrt(frames))
    # What is drawn so far, each thing once (a collapsed chain runs many steps in one box),
    # by kind (the green marks, then the edges of each width), as drawn by earlier blocks
    # (settled) and by this one (recent); and the gold marks.
    settled: list[dict[Any, Any]] = [{} for _ in SETTLED]
    recent: list[dict[Any, Any]] = [{} for _ in RECENT]
    leaves: dict[str, None] = {}
    raised = {where.get(s.node, s.node) for s in steps if s.raised}  # never done
    unplaced: set[Key] = set()  # the numbers said so far that have no room
    kinds = range(len(RECENT))

    def drawn(parts: list[dict[Any, Any]], traces: tuple[int, ...]) -> dict[int, dict[str, Any]]:
        return {traces[k]: _marks(list(parts[k].values()), boxes) if k == 0 else
                _lines(list(parts[k].values())) for k in kinds}

    state = drawn(recent, RECENT) | drawn(settled, SETTLED) | {
        OUTLINE: _outline([], boxes), STARS: _marks([], boxes), NUMBERS: _texts(said, placed),
        LEADERS: _leaders(said, placed),
        CAPTION: _caption(text("before_backward", lang) if batches else "", x0 - PAD,
                          y1 + PAD)}
    frames = []
    base: dict[int, dict[str, Any]] = {}  # what the block's first frame shows
    # A still picture needs the steps up to the one it shows, and draws that one alone.
    upto = len(batches) if animated else (shown + 1 if at is not None else 0)
    for number, batch in enumerate(batches[:upto]):
        first = number % block == 0
        if first:
            for part, into in zip(recent, settled, strict=True):
                into.update(part)
                part.clear()
        running = list(dict.fromkeys(
            node for i in batch if (node := where.get(steps[i].node, steps[i].node))
            in boxes))
        recent[0].update((n, n) for n in running if n not in settled[0] and n not in raised)
        for i in batch:
            for points, size, _ in carried.get(i, []):
                kind = 1 + _bucket(size, top)
                if id(points) not in settled[kind]:
                    recent[kind][id(points)] = points
            leaves.update(dict.fromkeys(n for n in written_at.get(i, []) if n in boxes))
            said.update((k, both[placed[k].form]) for k, both in labels.get(i, {}).items()
                        if k in placed)
            unplaced.update(k for k in labels.get(i, {}) if k not in placed)
        if not animated and number < shown:
            continue
        values = drawn(recent, RECENT) | {
            OUTLINE: _outline(running, boxes), STARS: _marks(list(leaves), boxes),
            NUMBERS: _texts(said, placed), LEADERS: _leaders(said, placed),
            CAPTION: _caption(text("replay_raised" if steps[batch[-1]].raised else
                                   "replay_step", lang, step=batch[-1] + 1, steps=len(steps),
                                   name=escape(steps[batch[-1]].name)), x0 - PAD, y1 + PAD)}
        if not animated:
            state = values | drawn(settled, SETTLED)
            break
        # The block's first frame holds every trace; the others only what differs from it,
        # and plotly merges them into it (`baseframe`): frames grow with the graph, not with
        # the graph times the frames.
        if first:
            base = values = values | drawn(settled, SETTLED)
        else:
            values = {t: v for t, v in values.items() if v != base[t]}
        order = sorted(values, key=lambda t: (t == CAPTION, t in SETTLED, t))
        frames.append({"name": str(number + 1), "traces": order,
                       "data": [_scatter(**values[t]) for t in order],
                       **({} if first else {"baseframe": str(number - number % block + 1)})})
        if number == shown and at is not None:
            state = base | values
    told = len(steps) if ahead else (-1 if at is None else at)  # the last step hover tells
    state[HOVER] = _hover_points(call, where, boxes, told, lang)
    # Plain dicts, not checked by plotly here (a third of a step's drawing time); that they
    # are what plotly would make of them is a test. Frames carry only data, not style.
    data = [_scatter(**STYLES[t], **state[t]) for t in range(len(STYLES))]
    if not animated:
        return go.Figure(data=data, _validate=False, layout=_layout(
            layout, bounds, svg, [], height, shown, len(unplaced), lang))
    return go.Figure(data=data, frames=frames, _validate=False, layout=_layout(
        layout, bounds, svg, [f["name"] for f in frames], height, shown, len(unplaced), lang))


def left_off(chart: go.Figure) -> int:
    """How many numbers `figure` had no room for, of those said by the step it shows (all
    of them, animated)."""
    return (chart.layout.meta or {}).get("left_off", 0)


def waiting(call: Call, layout: dict[str, Any], svg: str,
            groups: dict[str, list[str]] | None, at: int, height: int = 640,
            numbers: bool | None = None, lang: str = "en") -> go.Figure:
    """The still picture of engine step `at` before it runs, for a learner to predict it:
    what the steps before it drew (nothing of what it sends), its node outlined, and its
    caption naming it as the page's controls do."""
    chart = figure(call, layout, svg, groups, at=at - 1 if at else None, height=height,
                   numbers=numbers, animated=False, lang=lang, ahead=False)
    step = call.steps[at]
    node = _grouped(groups or {}).get(step.node, step.node)
    boxes = layout["nodes"]
    x0, y1 = chart.layout.xaxis.range[0] + PAD, layout["bb"][3]
    chart.update_traces(selector=OUTLINE, **_outline([node] if node in boxes else [], boxes))
    chart.update_traces(selector=CAPTION, **_caption(text(
        "replay_waiting", lang, step=at + 1, steps=len(call.steps), name=escape(step.name)),
        x0 - PAD, y1 + PAD))
    return chart


def growing(call: Call, layout: dict[str, Any], svg: str,
            groups: dict[str, list[str]] | None, made: frozenset[str], new: frozenset[str],
            caption: str, height: int = 640, lang: str = "en") -> go.Figure:
    """The picture of `call`'s graph while the forward pass builds it: the nodes not `made`
    yet (and their edges) veiled, those the statement shown added (`new`) outlined, nothing
    of the backward pass yet; `caption` above it, its hover text in `lang`."""
    chart = figure(call, layout, svg, groups, height=height, numbers=False, animated=False,
                   lang=lang)
    where = _grouped(groups or {})
    boxes = layout["nodes"]
    made = frozenset(where.get(n, n) for n in made)
    hidden = [n for n in boxes if n not in made]
    veiled = [points for tail, head, points in layout["edges"]
              if tail not in made or head not in made]
    x0, _, _, y1 = layout["bb"]
    chart.update_traces(selector=OUTLINE, **_outline(
        [n for n in dict.fromkeys(where.get(n, n) for n in new) if n in boxes], boxes))
    chart.update_traces(selector=CAPTION, **_caption(escape(caption), x0 - PAD, y1 + PAD))
    chart.add_traces([
        _scatter(**_lines(veiled), mode="lines", line={"color": "white", "width": 9},
                 opacity=0.85, **_SKIP),
        _scatter(**_outline(hidden, boxes, pad=2), mode="lines", fill="toself",
                 fillcolor="white", line={"width": 0}, opacity=0.85, **_SKIP)])
    return chart


def _caption(text: str, x: float, y: float) -> dict[str, Any]:
    """Which step a frame shows, above the top left corner (a trace, so frames can change
    it)."""
    return {"x": [x], "y": [y], "text": [f"<b>{text}</b>"]}


def _scatter(**props: Any) -> dict[str, Any]:
    """A scatter trace as plain data."""
    return {"type": "scatter", **props}


def _grouped(groups: dict[str, list[str]]) -> dict[str, str]:
    """Node id -> the collapsed group drawn in its place."""
    return {member: gid for gid, members in groups.items() for member in members}


Carried = dict[int, list[tuple[list[tuple[float, float]], float, Gradient | None]]]
Paths = dict[tuple[str, str], list[list[tuple[float, float]]]]  # (tail, head) -> its edges


def _carried(call: Call, where: dict[str, str],
             paths: Paths) -> Carried:
    """step -> [(edge points, gradient norm, gradient)] for each edge that step sent gradient
    along (the gradient is None where a hook cleared a `.grad`)."""
    out: Carried = {}

    def carry(step: int, tail: str, head: str, used: int, grad: Gradient | None) -> None:
        candidates = paths.get((tail, head), [])  # graph edges point the forward way
        if tail != head and candidates:
            out.setdefault(step, []).append((candidates[used % len(candidates)],
                                             grad.norm if grad else 0.0, grad))

    steps = call.steps
    if steps and steps[0].grad_outputs and steps[0].grad_outputs[0]:
        for root in call.roots:  # the gradient the pass starts from, into the root's node
            carry(0, where.get(steps[0].node, steps[0].node), root, 0,
                  steps[0].grad_outputs[0])
    for i, step in enumerate(steps):
        node = where.get(step.node, step.node)
        count: dict[str, int] = {}
        for grad in step.grad_inputs:
            if grad and grad.to:
                target = where.get(grad.to, grad.to)
                carry(i, target, node, count.get(target, 0), grad)
                count[target] = count.get(target, 0) + 1
    for grad in call.leaf_grads:  # AccumulateGrad writes .grad (a hook may clear it)
        node = where.get(grad.node, grad.node)
        carry(grad.after - 1, grad.leaf, node, 0, grad.grad)
    return out


Forms = tuple[str, str, str]  # a number in full, short on a line, short and stacked (_forms)
Key = tuple[str, str]  # what a number is about: an edge ("edge", its index), a sum, a .grad
Said = dict[int, dict[Key, Forms]]  # step -> what it writes
Anchor = list[tuple[float, float]] | tuple[float, float, float, float]  # edge points, box
Box = tuple[float, float, float, float]  # left, bottom, right, top


def _labels(call: Call, where: dict[str, str], boxes: dict[str, tuple], carried: Carried,
            order: dict[int, int], paths: Paths, lang: str) -> tuple[Said, dict[Key, Anchor]]:
    """step -> the numbers it writes on the picture, each in its forms (`_forms`), by what
    they are about: the gradient each edge carried (`order`: an edge's index by id of its
    points) but what a `.grad` says (`_said_by_grad`); at a node run with gradients from
    several edges, their sum; at a node a hook of the program's gave another gradient than
    its edges carried (explorer.views.hooked), what it received (`hook → …`, in `lang`); at
    a leaf, the `.grad`. And what each number stands beside: its edge's points, or its node's
    box."""
    out: Said = {}
    anchors: dict[Key, Anchor] = {}
    told = _said_by_grad(call, where, boxes, paths)
    for step, edges in carried.items():
        for points, _, grad in edges:
            if id(points) in told and told[id(points)] in (None, _forms(grad, "")[0]):
                continue
            key = ("edge", str(order[id(points)]))
            anchors[key] = points
            out.setdefault(step, {})[key] = _forms(grad, "")
    received: dict[str, list[str]] = {}  # node -> what earlier steps sent it
    hooked, hook = changed(call), f"{text('hook', lang)} → "
    for i, step in enumerate(call.steps):
        node = where.get(step.node, step.node)
        parts = received.pop(node, [])
        grad = step.grad_outputs[0] if step.grad_outputs else None
        if grad and node in boxes and i in hooked:
            anchors[("sum", node)] = boxes[node]
            out.setdefault(i, {})[("sum", node)] = _forms(grad, hook)
        elif len(parts) > 1 and grad and node in boxes:
            anchors[("sum", node)] = boxes[node]
            out.setdefault(i, {})[("sum", node)] = (
                f"{' + '.join(parts)}{_forms(grad, ' = ')[0]}", *_forms(grad, "Σ = ")[1:])
        for sent in step.grad_inputs:
            if sent and sent.to:
                received.setdefault(where.get(sent.to, sent.to), []).append(
                    described(sent))
    latest = {(g.after - 1, g.leaf): g for g in _written(call) if g.leaf in boxes}
    for (step_index, leaf), g in latest.items():  # a .grad written again: its last, once
        anchors[("grad", leaf)] = boxes[leaf]
        out.setdefault(step_index, {})[("grad", leaf)] = _forms(g.grad, ".grad = ")
    return out, anchors


def _written(call: Call) -> list[LeafGrad]:
    """The `.grad`s a call wrote: its leaves', then those of the tensors that retain theirs."""
    return [*call.leaf_grads, *(call.retained or ())]


def _said_by_grad(call: Call, where: dict[str, str], boxes: dict[str, tuple],
                  paths: Paths) -> dict[int, str | None]:
    """The edges whose number a leaf's `.grad` label may say (id of the edge's points): from
    the leaf into its AccumulateGrad, which carries the `.grad` itself (None: always), and
    out of that AccumulateGrad, which carry what the engine sent it (the `.grad` written:
    the same where nothing was there to add to)."""
    out_of: dict[str, list[Any]] = {}  # node -> the points of the edges out of it
    for (tail, _), options in paths.items():
        out_of.setdefault(tail, []).extend(options)
    last: dict[tuple[str, str], int] = {}  # (leaf, its node) -> its last .grad's index
    for k, g in enumerate(call.leaf_grads):
        if g.leaf in boxes:
            last[(g.leaf, where.get(g.node, g.node))] = k
    latest: dict[str, tuple[int, str]] = {}  # node -> the last .grad written there, its leaf
    for (leaf, node), k in last.items():
        if latest.get(node, (-1, ""))[0] < k:
            latest[node] = (k, leaf)
    # Each edge says what the last .grad that touches it does (each edge and node once: a
    # call's .grads may be many, its edges many): out of a node, that .grad; from the leaf
    # into it, nothing (and that last, of the same .grad).
    told: dict[int, tuple[int, str | None]] = {}
    for node, (k, leaf) in latest.items():
        written = None if node == leaf else _forms(call.leaf_grads[k].grad, "")[0]
        told.update((id(p), (k, written)) for p in out_of.get(node, ()))
    for (leaf, node), k in last.items():
        told.update((id(p), (k, None)) for p in paths.get((leaf, node), ())
                    if told.get(id(p), (-1,))[0] <= k)
    return {edge: written for edge, (_, written) in told.items()}


def _forms(grad: Gradient | None, before: str) -> Forms:
    """A gradient after `before` in full, and short (a few values, present.few, as they are
    either way): on one line where it fits one, and on lines of their own
    (`present.stacked`) under `before`, narrower."""
    if not grad:
        return (f"{before}None",) * 3
    short = described(grad, SHORT, rows=True)
    stacked = f"{before.rstrip()}\n{short}" if before.strip() else short
    line = stacked if "\n" in short else before + short
    return before + described(grad), _aligned(line), _aligned(stacked)


def _aligned(text: str) -> str:
    """Lines of `text` padded with no-break spaces (which SVG keeps) to one length, so that
    centred in a monospaced font they stand one under another."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    wide = max(map(len, lines))
    return "\n".join(line.replace(" ", "\u00a0").ljust(wide, "\u00a0") for line in lines)


def _bounds(bb: Box, wide: tuple[float, float], height: int) -> tuple[Box, float]:
    """The plot's bounds with margins `wide` pixels wide left and right of the picture, and
    its pixels per point where it is drawn smallest: `height` high, at least NARROW wide."""
    across, up = bb[2] - bb[0] + 2 * PAD, bb[3] - bb[1] + 2 * PAD
    tall = (height - MARGIN) / up  # pixels per point if the height decides
    spare = max(0.0, NARROW / tall - across) / 2  # points free on each side at no cost
    across += 2 * spare
    both = sum(wide)
    extra = both / tall if NARROW / (across + both / tall) >= tall else (
        across * both / (NARROW - both))  # else the width does: the margins are `wide` still
    left, right = (extra * side / both if both else 0.0 for side in wide)
    bounds = (bb[0] - PAD - spare - left, bb[1] - PAD, bb[2] + PAD + spare + right,
              bb[3] + PAD)
    return bounds, min(tall, NARROW / (across + extra))


def _extent(text: str, scale: float) -> tuple[float, float]:
    """How wide and high `text` (lines) is on the picture, in points, at `scale` pixels per
    point (the numbers' font is monospaced)."""
    lines = text.split("\n")
    return (max(map(len, lines)) * CHAR + 2 * GAP) / scale, (
        LINE + (len(lines) - 1) * SPACING + 2 * GAP) / scale


def _widest(texts: list[str], scale: float) -> tuple[float, float]:
    """The room that each of `texts`, written in one place in turn, fits in (`_extent`)."""
    widths, heights = zip(*(_extent(t, scale) for t in texts), strict=True)
    return max(widths), max(heights)


class Placed(NamedTuple):
    """Where a number stands: the point it is pinned at, the way it runs from there (`side`:
    1 rightwards, -1 leftwards, 0 centred on it), which of its forms it is written in
    (LEVELS), and for one in the margin, the line that leads from it to what it is about."""

    x: float
    y: float
    side: int
    form: int
    leader: tuple[float, float, float, float] | None


class Obstacles(NamedTuple):
    """What no number may cover, in points: boxes (the nodes, the modules' names) and lines
    (the edges as drawn and as the overlay draws them, their arrowheads, the modules'
    frames)."""

    boxes: list[Box]
    lines: list[Box]


Spot = tuple[float, float, int]  # a number's centre, and the way it runs from its pin


def _obstacles(layout: dict[str, Any]) -> Obstacles:
    """What no number may cover in `layout` (explorer.views.render.positions)."""
    boxes: list[Box] = [(x - w / 2 - 1, y - h / 2 - 1, x + w / 2 + 1, y + h / 2 + 1)
                        for x, y, w, h in layout["nodes"].values()]
    boxes += [tuple(b) for b in layout.get("cluster_names", ())]
    lines: list[Box] = [tuple(a) for a in layout.get("arrows", ())]
    for _, _, points in layout["edges"]:
        for path in (_along(points, 8), points):  # the curve, and the overlay's polyline
            lines += [(*a, *b) for a, b in zip(path, path[1:], strict=False)]
    for x0, y0, x1, y1 in layout.get("clusters", ()):
        lines += [(x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0)]
    return Obstacles(boxes, lines)


def _place(said: Said, anchors: dict[Key, Anchor], obstacles: Obstacles, bb: Box,
           height: int) -> tuple[dict[Key, Placed], Box]:
    """Where each number stands, and the bounds of the plot: no number on another, on an
    obstacle or on a line leading to another, none outside the plot where it is drawn
    smallest, no leading line across another number or a node. Greedy (`_attempt`) in
    margins beside the picture widened, each time for the first number without room (as
    wide as it, or a column more, on the side of what it is about), until all fit or no
    more fit in half the plot; the widening that left the fewest without room wins, and
    those are left off (`left_off`). Then its margins as narrow as leave no more numbers, and
    no more `.grad`s, without room: margins widened for a number that still found none drew
    the picture smaller for nothing. All of it looks at no more than WORK (a big graph's
    numbers would take minutes): past it, the rest are left off too."""
    texts: dict[Key, list[Forms]] = {}
    for step in sorted(said):
        for key, both in said[step].items():
            texts.setdefault(key, []).append(both)
    texts = dict(sorted(texts.items(), key=lambda item: item[0][0] != "grad"))  # .grads first
    grads = [key for key in texts if key[0] == "grad"]

    def left(placed: dict[Key, Placed]) -> tuple[int, int]:  # .grads and all without room
        return sum(key not in placed for key in grads), len(texts) - len(placed)

    work = _Work()
    wide = (0.0, 0.0)  # pixels of margin left and right
    best: tuple[tuple[int, int], tuple[float, float], dict[Key, Placed], Box] | None = None
    while True:
        placed, bounds, sizes, scale = _attempt(texts, anchors, obstacles, bb, height, wide,
                                                work)
        without = left(placed)
        if best is None or without[1] < best[0][1]:
            best = without, wide, placed, bounds
        # pixels more of margin, on the side of what it is about, that the first number
        # without room needs (as wide as it, or a column more), of those the margins can hold
        side, grow = next(((side, more) for k in texts if k not in placed
                           for side in [_side(anchors[k], bb)]
                           for need in [sizes[k][-1][0] * scale + GAP]
                           for more in [need - wide[side] if need > wide[side] + 1 else need]
                           if sum(wide) + more <= NARROW / 2), (0, 0.0))
        if not grow or work.over:
            break
        wide = (wide[0] + grow, wide[1]) if side == 0 else (wide[0], wide[1] + grow)
    fewest, wide, placed, bounds = best
    for share in NARROWER if any(wide) and not work.over else ():
        narrower = (wide[0] * share, wide[1] * share)
        again, within, _, _ = _attempt(texts, anchors, obstacles, bb, height, narrower, work)
        if not work.over and all(now <= then for now, then in zip(
                left(again), fewest, strict=True)):
            return again, within
    return placed, bounds


def _attempt(texts: dict[Key, list[Forms]], anchors: dict[Key, Anchor],
             obstacles: Obstacles, bb: Box, height: int, wide: tuple[float, float],
             work: _Work) -> tuple[dict[Key, Placed], Box, dict[Key, list[tuple[float, float]]],
                                   float]:
    """The numbers placed with margins `wide` pixels wide left and right, greedily, the
    leaves' `.grad`s first (what a learner checks), then in the order they are said: each
    beside what it is about, else short; then in a margin (a line leading to what it is
    about); none once the `work` is over. Also the plot's bounds, each number's room in each
    of its forms, and the scale."""
    bounds, scale = _bounds(bb, wide, height)
    taken = _Grid(4 * _extent("", scale)[1], work)  # the obstacles, then each number and line
    numbers = _Grid(taken.cell, work)  # the nodes and the numbers, which no leading line crosses
    for box in obstacles.boxes:
        taken.add(box)
        numbers.add((box[0] + 1.5, box[1] + 1.5, box[2] - 1.5, box[3] - 1.5))  # its rim
    for line in obstacles.lines:
        taken.add(line, line=True)
    sizes = {key: [_widest([t[level] for t in forms], scale) for level in LEVELS]
             for key, forms in texts.items()}
    placed: dict[Key, Placed] = {}
    for group in (0, 1):  # beside what it is about, then in a margin
        for key in (k for k in texts if k not in placed and not work.over):
            for level in LEVELS:  # in full, else short
                w, h = sizes[key][level]
                spot, leader = _first_free(_candidates(anchors[key], w, h, bb, bounds)[
                    group], w, h, anchors[key], taken, numbers, bounds, group == 1)
                if spot is not None:
                    x, y, side = spot
                    placed[key] = Placed(x - side * w / 2, y, side, level, leader)
                    taken.add(_box((x, y), w, h))
                    numbers.add(_box((x, y), w, h))
                    if leader is not None:
                        taken.add(leader, line=True)
                    break
    return placed, bounds, sizes, scale


def _side(anchor: Anchor, bb: Box) -> int:
    """0 if what a number is about stands in the picture's left half, else 1."""
    x = _middle_out(_along(anchor))[0][0] if isinstance(anchor, list) else anchor[0]
    return int(x > (bb[0] + bb[2]) / 2)


def _first_free(spots: list[Spot], w: float, h: float, anchor: Anchor, taken: _Grid,
                numbers: _Grid, bounds: Box, led: bool) -> tuple[Spot | None, Box | None]:
    """The first of `spots` where a number `w` by `h` is clear of all `taken`, and if `led`
    (in a margin), the line leading from it to what it is about (None, None: no such)."""
    for spot in spots:
        if taken.free(_box(spot[:2], w, h), bounds):
            leader = _lead(spot[:2], w, anchor, numbers) if led else None
            if leader or not led:
                return spot, leader
    return None, None


def _lead(spot: tuple[float, float], w: float, anchor: Anchor,
          numbers: _Grid) -> tuple[float, float, float, float] | None:
    """The line from the side of a number `w` wide at `spot` facing what it is about to
    that, across no box in `numbers`: to its edge, as near its middle as can be, or to
    its node's side facing it, else its top or bottom (None: no such line)."""
    if isinstance(anchor, list):
        ends = _middle_out(_along(anchor))
    else:
        x, y, w_node, h_node = anchor
        ends = [(x + w_node / 2 * (1 if spot[0] > x else -1), y), (x, y + h_node / 2),
                (x, y - h_node / 2)]
    return next((line for x, y in ends if numbers.clear(
        line := (spot[0] + w / 2 * (-1 if spot[0] > x else 1), spot[1], x, y))), None)


def _middle_out(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """`points`, from the middle one out."""
    middle = len(points) // 2
    return [points[k] for k in sorted(range(len(points)), key=lambda k: abs(k - middle))]


def _candidates(anchor: Anchor, w: float, h: float, bb: Box,
                bounds: Box) -> tuple[list[Spot], list[Spot]]:
    """Spots a number `w` by `h` may take, best first, each run away from what it is about:
    beside its edge from the middle out, or beside its node's box (level with it, so that
    no other node is nearer); and in the margins right and left of the picture, at its
    height or above or below."""
    near: list[Spot] = []
    if isinstance(anchor, list):
        along = _middle_out(_along(anchor))
        for x, y in along:
            near += [(x + w / 2 + GAP_PT, y, 1), (x - w / 2 - GAP_PT, y, -1),
                     (x, y + h / 2 + GAP_PT, 0), (x, y - h / 2 - GAP_PT, 0)]
        x, y0 = along[0]
    else:
        x, y0, bw, bh = anchor
        slide = abs(h - bh) / 2  # level with its box's middle, top or bottom: by it still
        for dy in (0, slide, -slide):
            near += [(x + bw / 2 + w / 2 + GAP_PT, y0 + dy, 1),
                     (x - bw / 2 - w / 2 - GAP_PT, y0 + dy, -1)]
        near += [(x, y0 - bh / 2 - h / 2 - GAP_PT, 0), (x, y0 + bh / 2 + h / 2 + GAP_PT, 0)]
    rows = min(MARGIN_ROWS, int(4 * (bb[3] - bb[1]) / h) + 8)  # a quarter of its height apart
    heights = [y for k in range(2 * rows) if bounds[1] + h / 2 <= (
        y := y0 + (k + 1) // 2 * h / 4 * (1 if k % 2 else -1)) <= bounds[3] - h / 2]
    columns = [c for c in sorted({bb[2] + PAD + w / 2, max(bb[2] + PAD + w / 2,
                                                            bounds[2] - w / 2),
                                  bb[0] - PAD - w / 2, min(bb[0] - PAD - w / 2,
                                                           bounds[0] + w / 2)})
               if bounds[0] <= c - w / 2 and c + w / 2 <= bounds[2]]  # within the plot
    return near, [(c, y, 1 if c > x else -1) for y in heights for c in columns]


class _Work:
    """What placing one picture's numbers has looked at so far: grid cells and what they
    hold (`_Grid`). Counted, not timed, so that where a picture stops is the same on any
    machine."""

    def __init__(self) -> None:
        self.done = 0

    @property
    def over(self) -> bool:
        return self.done >= WORK


class _Grid:
    """Boxes, and lines, filed by the square cells of side `cell` that their bounds cover:
    which are near a box, or a line. Each is filed with its bounds, which rule most out
    cheaply. What it looks at is counted in `work`."""

    def __init__(self, cell: float, work: _Work) -> None:
        self.cell = cell
        self.work = work
        self.cells: dict[tuple[int, int], list[tuple[Box, bool, Box]]] = defaultdict(list)

    def add(self, box: Box, line: bool = False) -> None:
        """File `box`, or (`line`) the line from (box[0], box[1]) to (box[2], box[3])."""
        extent = _extent_of(box)
        for cell in self._cells(extent):
            self.cells[cell].append((box, line, extent))

    def free(self, box: Box, bounds: Box) -> bool:
        """Whether `box` lies within `bounds`, on no box filed and across no line filed."""
        x0, y0, x1, y1 = box
        if not (bounds[0] <= x0 and bounds[1] <= y0 and x1 <= bounds[2] and y1 <= bounds[3]):
            return False
        filed = self._filed(self._cells(box))
        return not any(e[0] < x1 and x0 < e[2] and e[1] < y1 and y0 < e[3] and (
            not line or _crosses(other, box)) for other, line, e in filed)

    def clear(self, line: Box | None) -> bool:
        """Whether `line` (None: none) crosses no box filed."""
        if line is None:
            return True
        extent = _extent_of(line)
        return not any(not is_line and _overlap(extent, other) and _crosses(line, other)
                       for other, is_line, _ in self._filed(self._cells(extent)))

    def _filed(self, cells: list[tuple[int, int]]) -> Iterator[tuple[Box, bool, Box]]:
        """What is filed in `cells`, cell by cell, counted as looked at."""
        for cell in cells:
            filed = self.cells.get(cell, ())
            self.work.done += 1 + len(filed)
            yield from filed

    def _cells(self, box: Box) -> list[tuple[int, int]]:
        """The cells that `box` (left, bottom, right, top) covers."""
        c = self.cell
        return [(i, j) for i in range(math.floor(box[0] / c), math.floor(box[2] / c) + 1)
                for j in range(math.floor(box[1] / c), math.floor(box[3] / c) + 1)]


def _extent_of(line: Box) -> Box:
    """The bounds (left, bottom, right, top) of a box, or of a line between two points."""
    return (min(line[0], line[2]), min(line[1], line[3]), max(line[0], line[2]),
            max(line[1], line[3]))


def _along(points: list[tuple[float, float]], steps: int = 4) -> list[tuple[float, float]]:
    """Points along an edge drawn as cubic Bézier segments (graphviz's spline), `steps` a
    segment."""
    out = []
    for k in range(0, len(points) - 3, 3):
        p0, p1, p2, p3 = points[k:k + 4]
        for t in (i / steps for i in range(steps)):
            u = 1 - t
            out.append(tuple(u ** 3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t ** 3 * d
                             for a, b, c, d in zip(p0, p1, p2, p3, strict=True)))
    return out + [points[-1]] if out else list(points)


def _box(centre: tuple[float, float], w: float, h: float) -> Box:
    x, y = centre
    return x - w / 2, y - h / 2, x + w / 2, y + h / 2


def _crosses(line: Box, box: Box) -> bool:
    """Whether the line from (line[0], line[1]) to (line[2], line[3]) runs through the inside
    of `box` (Liang–Barsky: the part of the line within each side's half-plane)."""
    x, y, dx, dy = line[0], line[1], line[2] - line[0], line[3] - line[1]
    start, end = 0.0, 1.0
    for towards, room in ((-dx, x - box[0]), (dx, box[2] - x), (-dy, y - box[1]),
                          (dy, box[3] - y)):
        if towards == 0:
            if room <= 0:
                return False  # parallel to this side, outside it or on it
        elif towards < 0:
            start = max(start, room / towards)
        else:
            end = min(end, room / towards)
    return start < end


def _overlap(a: Box, b: Box) -> bool:
    """Whether two boxes (left, bottom, right, top) share any area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _texts(said: dict[Key, str], placed: dict[Key, Placed]) -> dict[str, Any]:
    """The numbers as a text trace, each pinned as placed and carrying what it is about
    (`customdata`: `edge 3`, `sum n7`, `grad t19`); plotly reads tags in text: the run's
    words are escaped."""
    keys = [k for k in said if k in placed]
    return {"x": [round(placed[k].x, 1) for k in keys] or [None],
            "y": [round(placed[k].y, 1) for k in keys] or [None],
            "text": [escape(said[k]).replace("\n", "<br>") for k in keys] or [""],
            "textposition": [RUNS[placed[k].side] for k in keys] or ["middle center"],
            "customdata": [" ".join(k) for k in keys] or [""]}


def _leaders(said: dict[Key, str], placed: dict[Key, Placed]) -> dict[str, Any]:
    """The lines from what the numbers said in the margin are about to them."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for key, number in said.items():
        leader = placed[key].leader if key in placed and number else None
        if leader is not None:
            xs += [round(leader[2], 1), round(leader[0], 1), None]
            ys += [round(leader[3], 1), round(leader[1], 1), None]
    return _points(xs, ys)


def _bucket(size: float, top: float) -> int:
    """0..3: how large a gradient is next to the largest of this pass (log scale)."""
    if not size > 0:  # none, or not a number
        return 0
    if not math.isfinite(size):
        return len(WIDTHS) - 1
    ratio = math.log10(size / top)  # <= 0
    return max(0, min(len(WIDTHS) - 1, len(WIDTHS) - 1 + math.floor(ratio)))


def _hover_points(call: Call, where: dict[str, str], boxes: dict[str, tuple], told: int,
                  lang: str) -> dict[str, Any]:
    """An invisible point on each node, telling what it received and sent by step `told` on
    hover (in `lang`), and which node it is when clicked (`customdata`)."""
    hover = _hover(call, where, told, lang)
    ids = [n for n in boxes if n in hover]
    return {"x": [boxes[n][0] for n in ids], "y": [boxes[n][1] for n in ids],
            "hovertext": [hover[n] for n in ids], "customdata": ids}


def _hover(call: Call, where: dict[str, str], told: int, lang: str) -> dict[str, str]:
    """What each node received and sent, for hovering, in `lang`; of the steps after `told`,
    only the op's name and a `?` (plotly reads tags in it: the run's words are escaped)."""
    told_of: dict[str, list[str]] = {}
    ops = {step.node: escape(cut(step.name, HOVER_OP)) for step in call.steps}
    for i, step in enumerate(call.steps):
        node = where.get(step.node, step.node)
        lines = told_of.setdefault(node, [])
        if len(lines) >= HOVER_LINES:  # each line written only where it is shown
            continue
        lines.append(f"<b>{i + 1}. {escape(cut(step.name, HOVER_OP))}</b>" + (
            "" if i <= told else " ?"))
        if i > told:
            continue
        for g in itertools.islice(filter(None, step.grad_outputs), HOVER_LINES):
            norm = "" if few(g.values, g.truncated) else f" ‖{written(g.norm)}‖"
            lines.append(text("hover_received", lang, values=escape(preview(g.values)),
                              norm=norm, device=escape(g.device)))
        for g in itertools.islice(filter(None, step.grad_inputs), HOVER_LINES):
            to = ops.get(g.to) or escape(cut(str(g.to), HOVER_OP))
            lines.append(f"→ {to}: {escape(preview(g.values))}")
    for g in _written(call):
        lines = told_of.setdefault(g.leaf, [])
        if len(lines) < HOVER_LINES:
            shown = "?" if g.after > told + 1 else preview(g.grad.values) if g.grad \
                else "None"
            lines.append(f".grad = {escape(shown)}")
    return {node: "<br>".join(lines[:HOVER_LINES]) for node, lines in told_of.items()}


def _marks(nodes: list[str], boxes: dict[str, tuple]) -> dict[str, Any]:
    """A mark at the top right corner of each node's box."""
    return _points([round(boxes[n][0] + boxes[n][2] / 2, 1) for n in nodes],
                   [round(boxes[n][1] + boxes[n][3] / 2, 1) for n in nodes])


def _outline(nodes: list[str], boxes: dict[str, tuple], pad: float = 3) -> dict[str, Any]:
    """A closed rectangle `pad` points around each node's box."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for n in nodes:
        x, y, w, h = boxes[n]
        left, right, low, high = x - w / 2 - pad, x + w / 2 + pad, y - h / 2 - pad, y + h / 2 + pad
        xs += [left, right, right, left, left, None]
        ys += [low, low, high, high, low, None]
    return _points(xs, ys)


def _lines(paths: list[list[tuple[float, float]]]) -> dict[str, Any]:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for points in paths:
        xs += [round(p[0], 1) for p in points] + [None]
        ys += [round(p[1], 1) for p in points] + [None]
    return _points(xs, ys)


def _points(xs: list[float | None], ys: list[float | None]) -> dict[str, Any]:
    """A trace's points; none as one gap, which plotly draws as nothing (a trace animated to
    no points without a redraw keeps what it drew before)."""
    return {"x": xs or [None], "y": ys or [None]}


def _layout(layout: dict[str, Any], bounds: Box, svg: str, names: list[str], height: int,
            active: int, left: int, lang: str) -> dict[str, Any]:
    """The picture under the plot (within `bounds`, with room for the numbers), and play
    buttons (named in `lang`) and a slider over the frames `names` (none without frames);
    `left` numbers left off (`left_off`)."""
    x0, y0, x1, y1 = layout["bb"]
    image = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    pad = PAD
    still = dict(
        height=height, margin={"l": 10, "r": 10, "t": TOP, "b": MARGIN - TOP}, plot_bgcolor="white",
        meta={"left_off": left},
        xaxis={"visible": False, "range": [bounds[0], bounds[2]]},
        yaxis={"visible": False, "range": [bounds[1], bounds[3]], "scaleanchor": "x"},
        images=[{"source": image, "xref": "x", "yref": "y", "x": x0 - pad, "y": y1 + pad,
                 "sizex": x1 - x0 + 2 * pad, "sizey": y1 - y0 + 2 * pad, "sizing": "stretch",
                 "layer": "below"}])
    if not names:
        return still
    return still | dict(
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0, "y": -0.02,
                      "xanchor": "left", "yanchor": "top", "buttons": [
                          _play(text("play", lang), 700),
                          _play(f"▶▶ {text('fast', lang)}", 250),
                          _play(f"▶ {text('slow', lang)}", 1500),
                          {"label": text("pause", lang), "method": "animate", "args": [[None], {
                              "mode": "immediate", "frame": {"duration": 0}}]}]}],
        sliders=[{"active": active, "x": 0.42, "len": 0.58, "y": -0.02, "yanchor": "top",
                  "currentvalue": {"visible": False}, "steps": [
                      {"label": n, "method": "animate", "args": [[n], {
                          "mode": "immediate", "frame": {"duration": 0, "redraw": False}}]}
                      for n in names]}])


def _play(label: str, duration: int) -> dict[str, Any]:
    return {"label": label, "method": "animate", "args": [None, {
        "frame": {"duration": duration, "redraw": False}, "fromcurrent": True,
        "transition": {"duration": 0}}]}
