"""What a run can be taken away as: the graph (DOT, SVG, PNG), the Trace (JSON), and the
backward animation as one self-contained HTML page that plays offline. Pure: no Streamlit.

The graph is the one the Graph page shows by default after the last step; the animation is
the figure the Backward page shows, for the last backward call that ran a node by default.
"""

from __future__ import annotations

import html
from string import Template

from explorer.content.i18n import text
from explorer.trace import Trace, notes
from explorer.trace.graph_view import View, view
from explorer.trace.schema import Call
from explorer.trace.wire import saved
from explorer.views.animation import figure, frames_of, left_off
from explorer.views.graph_page import defaults, drawn, no_graph
from explorer.views.render import png, positions, svg

PAGE = Template("""<!DOCTYPE html>
<html lang="$lang">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>
body { font-family: system-ui, sans-serif; color: #222; max-width: 1100px;
       margin: 24px auto; padding: 0 16px; }
h1 { font-size: 1.5rem; margin-bottom: 0.3rem; }
p { color: #555; margin: 0.3rem 0; }
</style>
</head>
<body>
<h1>$title</h1>
$caption
$figure
</body>
</html>
""")


class ExportError(Exception):
    """Nothing to export: no graph, no backward call that ran, or no such call."""


def graph_view(trace: Trace, lang: str = "en") -> View:
    """The Graph page's default view after the last step: the graph of the variable
    assigned most recently, saved tensors and node attributes shown, long chains collapsed,
    and on a small graph the variables' values and `.grad` under their labels (ExportError,
    in `lang`, when there is none)."""
    index = len(trace.steps) - 1
    if index < 0:
        raise ExportError(text("no_graph", lang))
    if trace.steps[index].graph is None:
        raise ExportError(text(no_graph(trace, index), lang))
    graph = trace.graphs[trace.steps[index].graph]
    if graph.note:
        raise ExportError(text("graph_note", lang, note=notes.said(graph.note, lang)))
    return drawn(trace, index, defaults(trace, index))


def graph_dot(trace: Trace, lang: str = "en") -> str:
    """The DOT of `graph_view`."""
    return graph_view(trace, lang).dot


def graph_svg(trace: Trace, lang: str = "en") -> str:
    """That graph drawn by graphviz as SVG."""
    return svg(graph_dot(trace, lang))


def graph_png(trace: Trace, lang: str = "en") -> bytes:
    """That graph drawn by graphviz as PNG."""
    return png(graph_dot(trace, lang))


def trace_json(trace: Trace) -> bytes:
    """The Trace as a file to keep (explorer.trace.wire.saved: each step with what it
    changed); `Trace.from_json` reads it back whole."""
    return saved(trace)


def backward_call(trace: Trace, call: int | None = None, lang: str = "en") -> Call:
    """Recorded backward call number `call`, or the last one that ran a node."""
    if not trace.backward:
        raise ExportError(text("no_backward", lang))
    ran = [c for c in trace.backward if c.graph is not None and c.steps]
    if call is None:
        if not ran:
            raise ExportError(text("backward_nothing", lang))
        return ran[-1]
    numbers = [c.call for c in trace.backward]
    if call not in numbers:
        raise ExportError(text("no_such_call", lang, call=call,
                               calls=", ".join(f"#{n}" for n in numbers)))
    if trace.backward[numbers.index(call)] not in ran:
        raise ExportError(text("backward_nothing", lang))
    return trace.backward[numbers.index(call)]


def animation_view(trace: Trace, call: Call) -> View:
    """What the animation draws under its overlays: the graph behind the call's roots and
    the tensors whose retained `.grad` it wrote, without saved tensors or attributes."""
    return view(trace.graphs[call.graph], [*call.roots, *(g.leaf for g in call.retained or ())],
                show_saved=False, show_attrs=False)


def animation_html(trace: Trace, call: int | None = None, lang: str = "en",
                   name: str | None = None) -> str:
    """A self-contained page of the backward animation of call number `call` (default: the
    last that ran a node), plotly.js inlined: it plays from a file with no network.
    `name` (the program's) goes into the heading."""
    chosen = backward_call(trace, call, lang)
    shown = animation_view(trace, chosen)
    chart = figure(chosen, positions(shown.dot), svg(shown.dot), shown.groups, at=0,
                   lang=lang)
    nodes = {n.id: n for n in trace.graphs[chosen.graph].nodes}
    # Every root is named: by its variable, else "root 0", "root 1"… (explorer.record.backward).
    root = ", ".join(n for r in chosen.roots if r in nodes for n in nodes[r].names or ())
    title = text("export_title", lang, root=root or "?", call=chosen.call)
    if name:
        title = f"{title} · {name}"
    steps = len(chosen.steps)
    lines = [text("export_caption", lang, steps=steps, device=trace.device),
             text("animation_help", lang)]
    if len(frames_of(steps)) < steps:
        lines.append(text("batched", lang, steps=steps, frames=len(frames_of(steps))))
    if count := left_off(chart):
        lines.append(text("numbers_left_off", lang, count=count))
    plot = chart.to_html(include_plotlyjs=True, full_html=False, auto_play=False,
                         div_id="animation", config={"displaylogo": False})
    return PAGE.substitute(lang=html.escape(lang), title=html.escape(title), figure=plot,
                           caption="\n".join(f"<p>{html.escape(line)}</p>" for line in lines))
