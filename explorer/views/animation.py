"""The backward pass as a plotly animation that plays in the browser. Pure: no torch.

The picture is graphviz's SVG of the same DOT the graph page shows, laid under the plot;
the animated overlays sit at graphviz's own coordinates: an orange outline on the node the
engine runs, green marks on the nodes done, orange edges carrying gradient so far (wider
for larger gradients), and gold marks on leaves whose `.grad` was written. With `numbers`,
each edge is labelled with the gradient it carried, a node where edges meet with their sum
(`2.25 + 2.25 = 4.5`) and a leaf with the `.grad` written. Frames hold only overlay data,
and long passes are batched into at most MAX_FRAMES frames. Frames come in blocks of about
sqrt(frames): a block's first frame holds every overlay, the others only what changed since
it (plotly merges them into it), so the figure grows about linearly with the pass.
"""

from __future__ import annotations

import base64
import math
from html import escape
from typing import Any

import plotly.graph_objects as go

from explorer.content.i18n import text
from explorer.views.present import described, preview

MAX_FRAMES = 120
NUMBERS_UP_TO = 40  # nodes of a picture that shows numbers unless asked not to
WIDTHS = (1.5, 3, 4.5, 6.5)  # edge width for each magnitude class
ORANGE, GREEN, GOLD = "#f76707", "#2f9e44", "#f2b705"
# The figure's traces, in drawing order. The green marks and the edges of each width are two
# traces each: what earlier blocks of frames drew (settled) and what this block drew (recent).
SETTLED = (0, 4, 6, 8, 10)  # the green marks, then the edges of each width
RECENT = (1, 5, 7, 9, 11)
OUTLINE, STARS, HOVER, NUMBERS, CAPTION = 2, 3, 12, 13, 14  # the hover points are invisible
RED = "#c92a2a"
PAD = 4  # graphviz's margin around the drawing, in points
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
    NUMBERS: {"mode": "text", "cliponaxis": False,
              "textfont": {"size": 11, "color": RED}, **_SKIP},
    CAPTION: {"mode": "text", "textposition": "top right", "textfont": {"size": 13},
              "cliponaxis": False, **_SKIP},  # above the plot, in its top margin
}


def frames_of(steps: int) -> list[range]:
    """Which engine steps each frame adds: one each, or batched past MAX_FRAMES."""
    per = max(1, math.ceil(steps / MAX_FRAMES))
    return [range(i, min(i + per, steps)) for i in range(0, steps, per)]


def figure(call: dict[str, Any], layout: dict[str, Any], svg: str,
           groups: dict[str, list[str]] | None = None, at: int | None = None,
           height: int = 640, numbers: bool | None = None, animated: bool = True,
           lang: str = "en") -> go.Figure:
    """The animated figure of one recorded backward call over its laid-out graph, showing
    the state after engine step `at` (0-based; None: before the pass), with the gradients'
    values written on it if `numbers` (None: if it has at most NUMBERS_UP_TO nodes). Not
    `animated`, it is that state alone, with no frames, play buttons or slider: a page that
    steps through the pass with controls of its own draws it anew at each step. Its captions
    are in `lang`."""
    where = _grouped(groups or {})
    boxes = layout["nodes"]
    paths: dict[tuple[str, str], list[list[tuple[float, float]]]] = {}
    for tail, head, points in layout["edges"]:  # parallel edges (y * y) each keep their own
        paths.setdefault((tail, head), []).append(points)
    steps = call["steps"]
    carried = _carried(call, where, paths)
    top = max((size for edges in carried.values() for _, size, _ in edges), default=1.0) or 1.0
    x0, _, _, y1 = layout["bb"]
    written_at: dict[int, list[str]] = {}
    for g in call["leaf_grads"]:
        written_at.setdefault(g["after"] - 1, []).append(g["leaf"])
    if numbers is None:
        numbers = len(boxes) <= NUMBERS_UP_TO
    labels = _labels(call, where, boxes, carried) if numbers else {}
    # Where numbers will stand, all from the first frame on (empty until said): plotly
    # animated without a redraw puts text that is new to a trace in the wrong place.
    said = {spot: "" for step in sorted(labels) for spot in labels[step]}
    batches = frames_of(len(steps))
    shown = next(k for k, batch in enumerate(batches) if at in batch) if at is not None and \
        batches else 0
    block = math.isqrt(max(0, len(batches) - 1)) + 1  # frames per block: ceil(sqrt(frames))
    # What is drawn so far, each thing once (a collapsed chain runs many steps in one box),
    # by kind (the green marks, then the edges of each width), as drawn by earlier blocks
    # (settled) and by this one (recent); and the gold marks.
    settled: list[dict[Any, Any]] = [{} for _ in SETTLED]
    recent: list[dict[Any, Any]] = [{} for _ in RECENT]
    leaves: dict[str, None] = {}
    kinds = range(len(RECENT))

    def drawn(parts: list[dict[Any, Any]], traces: tuple[int, ...]) -> dict[int, dict[str, Any]]:
        return {traces[k]: _marks(list(parts[k].values()), boxes) if k == 0 else
                _lines(list(parts[k].values())) for k in kinds}

    state = drawn(recent, RECENT) | drawn(settled, SETTLED) | {
        OUTLINE: _outline([], boxes), STARS: _marks([], boxes), NUMBERS: _texts(said),
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
            node for i in batch if (node := where.get(steps[i]["node"], steps[i]["node"]))
            in boxes))
        recent[0].update((n, n) for n in running if n not in settled[0])
        for i in batch:
            for points, size, _ in carried.get(i, []):
                kind = 1 + _bucket(size, top)
                if id(points) not in settled[kind]:
                    recent[kind][id(points)] = points
            leaves.update(dict.fromkeys(n for n in written_at.get(i, []) if n in boxes))
            said.update(labels.get(i, {}))
        if not animated and number < shown:
            continue
        values = drawn(recent, RECENT) | {
            OUTLINE: _outline(running, boxes), STARS: _marks(list(leaves), boxes),
            NUMBERS: _texts(said),
            CAPTION: _caption(text("replay_step", lang, step=batch[-1] + 1, steps=len(steps),
                                   name=escape(steps[batch[-1]]["name"])), x0 - PAD, y1 + PAD)}
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
    state[HOVER] = _hover_points(call, where, boxes)
    # Plain dicts, not checked by plotly here (a third of a step's drawing time); that they
    # are what plotly would make of them is a test. Frames carry only data, not style.
    data = [_scatter(**STYLES[t], **state[t]) for t in range(len(STYLES))]
    if not animated:
        return go.Figure(data=data, layout=_layout(layout, svg, [], height, shown),
                         _validate=False)
    return go.Figure(data=data, frames=frames, _validate=False,
                     layout=_layout(layout, svg, [f["name"] for f in frames], height, shown))


def growing(call: dict[str, Any], layout: dict[str, Any], svg: str,
            groups: dict[str, list[str]] | None, made: frozenset[str], new: frozenset[str],
            caption: str, height: int = 640) -> go.Figure:
    """The picture of `call`'s graph while the forward pass builds it: the nodes not `made`
    yet (and their edges) veiled, those the statement shown added (`new`) outlined, nothing
    of the backward pass yet; `caption` above it."""
    chart = figure(call, layout, svg, groups, height=height, numbers=False, animated=False)
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


Spot = tuple[float, float, str]  # where a number stands: x, y and its side of the point
Carried = dict[int, list[tuple[list[tuple[float, float]], float, dict[str, Any] | None]]]


def _carried(call: dict[str, Any], where: dict[str, str],
             paths: dict[tuple[str, str], list[list[tuple[float, float]]]]) -> Carried:
    """step -> [(edge points, gradient norm, gradient)] for each edge that step sent gradient
    along (the gradient is None where a hook cleared a `.grad`)."""
    out: Carried = {}

    def carry(step: int, tail: str, head: str, used: int, grad: dict[str, Any] | None) -> None:
        candidates = paths.get((tail, head), [])  # graph edges point the forward way
        if tail != head and candidates:
            out.setdefault(step, []).append((candidates[used % len(candidates)],
                                             grad["norm"] if grad else 0.0, grad))

    steps = call["steps"]
    if steps and steps[0]["grad_outputs"] and steps[0]["grad_outputs"][0]:
        for root in call["roots"]:  # the gradient the pass starts from, into the root's node
            carry(0, where.get(steps[0]["node"], steps[0]["node"]), root, 0,
                  steps[0]["grad_outputs"][0])
    for i, step in enumerate(steps):
        node = where.get(step["node"], step["node"])
        count: dict[str, int] = {}
        for grad in step["grad_inputs"]:
            if grad and grad.get("to"):
                target = where.get(grad["to"], grad["to"])
                carry(i, target, node, count.get(target, 0), grad)
                count[target] = count.get(target, 0) + 1
    for grad in call["leaf_grads"]:  # AccumulateGrad writes .grad (a hook may clear it)
        node = where.get(grad["node"], grad["node"])
        carry(grad["after"] - 1, grad["leaf"], node, 0, grad["grad"])
    return out


def _labels(call: dict[str, Any], where: dict[str, str], boxes: dict[str, tuple],
            carried: Carried) -> dict[int, dict[Spot, str]]:
    """step -> the numbers it writes on the picture, by where they stand: the gradient beside
    the middle of each edge it sent along (outside, for an edge bent to one side); beside a
    node run with gradients from several edges, their sum; beside a leaf, the `.grad`."""
    out: dict[int, dict[Spot, str]] = {}
    for step, edges in carried.items():
        for points, _, grad in edges:
            x, y = points[len(points) // 2]
            left = x < (points[0][0] + points[-1][0]) / 2 - 1
            spot = (round(x - 3, 1), round(y, 1), "middle left") if left else (
                round(x + 3, 1), round(y, 1), "middle right")
            out.setdefault(step, {})[spot] = described(grad) if grad else "None"
    received: dict[str, list[str]] = {}  # node -> what earlier steps sent it
    for i, step in enumerate(call["steps"]):
        node = where.get(step["node"], step["node"])
        parts = received.pop(node, [])
        grad = step["grad_outputs"][0] if step["grad_outputs"] else None
        if len(parts) > 1 and grad and node in boxes:
            x, y, w, _ = boxes[node]
            out.setdefault(i, {})[(round(x + w / 2 + 4, 1), round(y, 1), "middle right")] = (
                f"{' + '.join(parts)} = {described(grad)}")
        for sent in step["grad_inputs"]:
            if sent and sent.get("to"):
                received.setdefault(where.get(sent["to"], sent["to"]), []).append(
                    described(sent))
    for g in call["leaf_grads"]:
        if g["leaf"] in boxes:
            x, y, w, _ = boxes[g["leaf"]]
            shown = described(g["grad"]) if g["grad"] else "None"
            out.setdefault(g["after"] - 1, {})[(round(x + w / 2 + 4, 1), round(y, 1),
                                                "middle right")] = f".grad = {shown}"
    return out


def _texts(said: dict[Spot, str]) -> dict[str, Any]:
    """The numbers as a text trace (plotly reads tags in text: the run's words are escaped)."""
    return {"x": [x for x, _, _ in said] or [None], "y": [y for _, y, _ in said] or [None],
            "textposition": [side for _, _, side in said] or ["middle right"],
            "text": [escape(t) for t in said.values()] or [""]}


def _bucket(size: float, top: float) -> int:
    """0..3: how large a gradient is next to the largest of this pass (log scale)."""
    if size <= 0:
        return 0
    ratio = math.log10(size / top) if top > 0 else 0.0  # <= 0
    return max(0, min(len(WIDTHS) - 1, len(WIDTHS) - 1 + math.floor(ratio)))


def _hover_points(call: dict[str, Any], where: dict[str, str],
                  boxes: dict[str, tuple]) -> dict[str, Any]:
    """An invisible point on each node, telling what it received and sent on hover, and
    which node it is when clicked (`customdata`)."""
    hover = _hover(call, where)
    ids = [n for n in boxes if n in hover]
    return {"x": [boxes[n][0] for n in ids], "y": [boxes[n][1] for n in ids],
            "hovertext": [hover[n] for n in ids], "customdata": ids}


def _hover(call: dict[str, Any], where: dict[str, str]) -> dict[str, str]:
    """What each node received and sent, for hovering (plotly reads tags in it: the run's
    words are escaped)."""
    text: dict[str, list[str]] = {}
    for i, step in enumerate(call["steps"]):
        node = where.get(step["node"], step["node"])
        lines = text.setdefault(node, [])
        lines.append(f"<b>{i + 1}. {escape(step['name'])}</b>")
        for g in step["grad_outputs"]:
            if g:
                lines.append(f"in: {escape(preview(g['values']))} ‖{g['norm']:.4g}‖ "
                             f"{escape(g['device'])}")
        for g in step["grad_inputs"]:
            if g:
                lines.append(f"→ {escape(str(g.get('to')))}: {escape(preview(g['values']))}")
    for g in call["leaf_grads"]:
        shown = preview(g["grad"]["values"]) if g["grad"] else "None"
        text.setdefault(g["leaf"], []).append(f".grad = {escape(shown)}")
    return {node: "<br>".join(lines[:12]) for node, lines in text.items()}


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


def _layout(layout: dict[str, Any], svg: str, names: list[str], height: int,
            active: int) -> dict[str, Any]:
    """The picture under the plot, and play buttons and a slider over the frames `names`
    (none without frames)."""
    x0, y0, x1, y1 = layout["bb"]
    image = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    pad = PAD
    still = dict(
        height=height, margin={"l": 10, "r": 10, "t": 34, "b": 10}, plot_bgcolor="white",
        xaxis={"visible": False, "range": [x0 - pad, x1 + pad]},
        yaxis={"visible": False, "range": [y0 - pad, y1 + pad], "scaleanchor": "x"},
        images=[{"source": image, "xref": "x", "yref": "y", "x": x0 - pad, "y": y1 + pad,
                 "sizex": x1 - x0 + 2 * pad, "sizey": y1 - y0 + 2 * pad, "sizing": "stretch",
                 "layer": "below"}])
    if not names:
        return still
    return still | dict(
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0, "y": -0.02,
                      "xanchor": "left", "yanchor": "top", "buttons": [
                          _play("▶ Play", 700), _play("▶▶ Fast", 250), _play("▶ Slow", 1500),
                          {"label": "❚❚ Pause", "method": "animate", "args": [[None], {
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
