"""Autograd Explorer in a notebook: `explorer.show(code)` shows, inline and offline, what the
app shows of a run: its output or error, its autograd graph (SVG drawn by graphviz) and its
last backward pass as the animation (plotly.js inside a sandboxed frame: no server, no CDN).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from explorer.content.i18n import text
from explorer.trace import Trace
from explorer.views.export import ExportError, animation_html, graph_svg

FRAME = ('<iframe sandbox="allow-scripts" title="backward pass" style="width:100%;'
         'height:720px;border:1px solid #ddd" srcdoc="{page}"></iframe>')


@dataclass(frozen=True)
class Shown:
    """A run as a notebook shows it; `trace` is the whole record."""

    trace: Trace
    lang: str = "en"

    def _repr_html_(self) -> str:
        return fragment(self.trace, self.lang)


def fragment(trace: Trace, lang: str = "en") -> str:
    """The HTML a notebook cell shows for `trace`: output, error, graph, animation."""
    parts = ['<div class="autograd-explorer">']
    if trace.stdout:
        parts.append(f"<pre>{html.escape(trace.stdout)}</pre>")
    if trace.error:
        where = text("error_on_line", lang, type=trace.error.type, line=trace.error.line) \
            if trace.error.line else trace.error.type
        parts.append(f"<pre style='color:#b00'>{html.escape(where)}: "
                     f"{html.escape(trace.error.message)}</pre>")
    for draw in (lambda: graph_svg(trace, lang),
                 lambda: FRAME.format(page=html.escape(animation_html(trace, lang=lang)))):
        try:
            parts.append(draw())
        except ExportError as nothing:
            parts.append(f"<p><em>{html.escape(str(nothing))}</em></p>")
    return "\n".join(parts + ["</div>"])
